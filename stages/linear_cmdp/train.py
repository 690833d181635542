"""linear_cmdp train: every agent of params on every instance of its setups, for every verdict
seed, K episodes each.

OPSE-LCMDP, its ablation without pessimism and the Ghosh et al. style baseline run batched
(stages/linear_cmdp/agents.py): every run with the same K, of every agent and every verdict seed,
advances in one lockstep batch (a seed dimension in the arrays: the runs of all seeds side by
side). The DOPE-style baseline runs one instance at a time with its extended LP warm-started in
HiGHS (stages/linear_cmdp/dope.py). Every run records, per episode, the exact V_r and V_u of the
policy it played (backward induction in the true CMDP), whether the safe policy was deployed,
and (OPSE / Ghosh) the multiplier lambda. Each run has its own random stream, seeded by
(verdict seed, agent name, the instance's setup and draw), so a seed's runs are the same whatever
else is in the batch (tests/linear_cmdp).

Writes data/linear_cmdp/results.npz (arrays ``s<seed>/<agent>/<field>``, runs x episodes) and
reports/linear_cmdp/train.json (what ran, and how long it took).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .instances import setup_seed
from .params import LinearCmdpParams
from .paths import INSTANCES, RESULTS, TRAIN_METRICS


def run_seed(seed: int, agent: str, setup: str, draw: int) -> list[int]:
    """The random stream of one run: the verdict seed, the agent, and the instance (its setup and
    the draw that made it), so a run does not depend on how many instances the other setups hold."""
    return [seed, setup_seed(agent), setup_seed(setup), draw]


def result_key(seed: int, agent: str, field: str) -> str:
    return f"s{seed}/{agent}/{field}"


def train_runs(insts: list[dict], tp, log=print, progress: bool = True) -> tuple[dict, dict]:
    """Every agent of ``tp`` on the instances ``insts`` (records of instances.json, any seeds:
    each with its ``seed`` and ``index``): ``({s<seed>/<agent>/<field>: array}, timing)``.
    The opse/ghosh runs of one K, of every seed, advance in one lockstep batch."""
    import time

    import numpy as np

    from .agents import AgentConfig, run_batch
    from .dope import run_dope

    seeds = sorted({rec["seed"] for rec in insts})
    runs = {a.name: [i for i, rec in enumerate(insts) if rec["setup"] in a.setups] for a in tp.agents}
    for a in tp.agents:
        if not runs[a.name]:
            fail(f"agent {a.name!r}: no instance of setups {a.setups} in {INSTANCES}")
    results: dict[str, np.ndarray] = {}
    timing = {}
    by_k: dict[int, list] = {}
    for a in tp.agents:
        if a.kind != "dope":
            by_k.setdefault(a.episodes, []).append(a)
    for K, agents in sorted(by_k.items(), reverse=True):
        cmdps, configs, streams, owners = [], [], [], []
        for a in agents:
            cfg = AgentConfig(kind=a.kind, c_r=a.c_r, c_u=a.c_u, c_d=a.c_d, b_d=a.b_d, kappa=a.kappa,
                              lam_max=a.lam_max, bisection_steps=tp.bisection_steps)
            for i in runs[a.name]:
                rec = insts[i]
                cmdps.append(rec["cmdp"])
                configs.append(cfg)
                streams.append(run_seed(rec["seed"], a.name, rec["setup"], rec["draw"]))
                owners.append((rec["seed"], a.name))
        names = sorted({n for _, n in owners}, key=[n for _, n in owners].index)
        log(f"  batch K={K}: {len(cmdps)} runs of {', '.join(names)} over seeds {seeds}")
        t0, c0 = time.perf_counter(), time.process_time()
        out = run_batch(cmdps, configs, K, streams, steps_per_pass=tp.steps_per_pass,
                        progress=f"linear_cmdp K={K}" if progress else None)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        for seed in seeds:
            for name in names:
                sel = np.array([o == (seed, name) for o in owners])
                if not sel.any():
                    continue
                for field, arr in out.items():
                    results[result_key(seed, name, field)] = arr[sel]
                results[result_key(seed, name, "instance")] = np.array(
                    [insts[i]["index"] for i in runs[name] if insts[i]["seed"] == seed])
        timing[f"batch_K{K}"] = {"agents": names, "runs": len(cmdps), "seconds": dt, "cpu_seconds": cpu,
                                 "ms_per_episode": 1e3 * dt / K}
        log(f"    {dt:.1f}s ({1e3 * dt / K:.2f} ms per lockstep episode, {cpu:.1f} CPU s)")
    for a in tp.agents:
        if a.kind != "dope":
            continue
        t0, c0 = time.perf_counter(), time.process_time()
        lp_s, n = 0.0, 0
        for seed in seeds:
            mine = [i for i in runs[a.name] if insts[i]["seed"] == seed]
            if not mine:
                continue
            per = [run_dope(insts[i]["cmdp"], a.episodes,
                            run_seed(seed, a.name, insts[i]["setup"], insts[i]["draw"]), a.c_r, a.c_u,
                            progress=f"{a.name} seed {seed} instance {insts[i]['index']}" if progress else None)
                   for i in mine]
            for field in ("V_r", "V_u", "safe"):
                results[result_key(seed, a.name, field)] = np.stack([p[field] for p in per])
            results[result_key(seed, a.name, "instance")] = np.array([insts[i]["index"] for i in mine])
            lp_s += float(sum(float(p["lp_s"]) for p in per))
            n += len(per)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        timing[a.name] = {"runs": n, "seconds": dt, "cpu_seconds": cpu, "highs_seconds": lp_s,
                          "ms_per_lp": 1e3 * lp_s / (a.episodes * n)}
        log(f"  {a.name}: {n} runs x {a.episodes} episodes, {dt:.1f}s "
            f"(HiGHS {timing[a.name]['ms_per_lp']:.2f} ms per LP)")
    return results, timing


def main() -> None:
    with stage("linear_cmdp", "train", LinearCmdpParams) as ctx:
        from stages.common.device import limit_threads
        from stages.common.io import write_json, write_npz

        from .instances import load_instances, seeds_of

        limit_threads()
        insts = load_instances(ctx.path(INSTANCES))
        held = seeds_of(insts)
        if held != list(ctx.seeds):
            fail(f"{INSTANCES} holds seeds {held}, the profile's verdict seeds are {list(ctx.seeds)}; "
                 f"run `dvc repro stages/linear_cmdp/dvc.yaml:linear_cmdp-prepare`")
        tp = ctx.params.train
        results, timing = train_runs(insts, tp, log=lambda s: print(s, flush=True))
        write_npz(ctx.path(RESULTS), results)                 # byte-reproducible: same runs, same hash
        write_json(ctx.path(TRAIN_METRICS), {
            "seeds": held, "timing": timing,
            "agents": {a.name: {"kind": a.kind, "episodes": a.episodes,
                                "runs_per_seed": len([r for r in insts if r["setup"] in a.setups]) // len(held),
                                "setups": a.setups} for a in tp.agents}})


if __name__ == "__main__":
    main()
