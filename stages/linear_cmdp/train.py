"""linear_cmdp train: every agent of params on every instance of its setups, K episodes each.

OPSE-LCMDP and the Ghosh et al. style baseline run batched (stages/linear_cmdp/agents.py: all
runs with the same K advance in lockstep); the DOPE-style baseline runs one instance at a time
with its extended LP warm-started in HiGHS (stages/linear_cmdp/dope.py). Every run records, per
episode, the exact V_r and V_u of the policy it played (backward induction in the true CMDP),
whether the safe policy was deployed, and (OPSE / Ghosh) the multiplier lambda. Each run has
its own random stream, seeded by (common.seed, agent name, instance index).

Writes data/linear_cmdp/results.npz (arrays ``<agent>/<field>``, runs x episodes) and
reports/linear_cmdp/train.json (what ran, and how long it took).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .instances import setup_seed
from .params import LinearCmdpParams
from .paths import INSTANCES, RESULTS, TRAIN_METRICS


def run_seed(common_seed: int, agent: str, instance: int) -> list[int]:
    return [common_seed, setup_seed(agent), instance]


def main() -> None:
    with stage("linear_cmdp", "train", LinearCmdpParams) as ctx:
        import time

        import numpy as np

        from stages.common.device import limit_threads
        from stages.common.io import write_json, write_npz

        from .agents import AgentConfig, run_batch
        from .dope import run_dope
        from .instances import load_instances

        limit_threads()
        insts = load_instances(ctx.path(INSTANCES))
        tp = ctx.params.train
        runs = {a.name: [i for i, rec in enumerate(insts) if rec["setup"] in a.setups] for a in tp.agents}
        for a in tp.agents:
            if not runs[a.name]:
                fail(f"agent {a.name!r}: no instance of setups {a.setups} in {INSTANCES}")
        results: dict[str, np.ndarray] = {}
        timing = {}
        # batched learners: every opse/ghosh run with the same K in one lockstep batch
        by_k: dict[int, list] = {}
        for a in tp.agents:
            if a.kind != "dope":
                by_k.setdefault(a.episodes, []).append(a)
        for K, agents in sorted(by_k.items(), reverse=True):
            cmdps, configs, seeds, owners = [], [], [], []
            for a in agents:
                cfg = AgentConfig(kind=a.kind, c_r=a.c_r, c_u=a.c_u, c_d=a.c_d, b_d=a.b_d, kappa=a.kappa,
                                  lam_max=a.lam_max, bisection_steps=tp.bisection_steps)
                for i in runs[a.name]:
                    cmdps.append(insts[i]["cmdp"])
                    configs.append(cfg)
                    seeds.append(run_seed(ctx.seed, a.name, i))
                    owners.append(a.name)
            names = sorted(set(owners), key=owners.index)
            print(f"  batch K={K}: {len(cmdps)} runs of {', '.join(names)}", flush=True)
            t0 = time.perf_counter()
            out = run_batch(cmdps, configs, K, seeds, steps_per_pass=tp.steps_per_pass,
                            progress=f"linear_cmdp K={K}")
            dt = time.perf_counter() - t0
            owners_arr = np.array(owners)
            for name in names:
                sel = owners_arr == name
                for field, arr in out.items():
                    results[f"{name}/{field}"] = arr[sel]
                results[f"{name}/instance"] = np.array(runs[name])
            timing[f"batch_K{K}"] = {"agents": names, "runs": len(cmdps), "seconds": dt,
                                     "ms_per_episode": 1e3 * dt / K}
            print(f"    {dt:.1f}s ({1e3 * dt / K:.2f} ms per lockstep episode)", flush=True)
        for a in tp.agents:
            if a.kind != "dope":
                continue
            t0 = time.perf_counter()
            per = [run_dope(insts[i]["cmdp"], a.episodes, run_seed(ctx.seed, a.name, i), a.c_r, a.c_u,
                            progress=f"{a.name} instance {i}") for i in runs[a.name]]
            dt = time.perf_counter() - t0
            for field in ("V_r", "V_u", "safe"):
                results[f"{a.name}/{field}"] = np.stack([p[field] for p in per])
            results[f"{a.name}/instance"] = np.array(runs[a.name])
            lp_s = float(sum(float(p["lp_s"]) for p in per))
            timing[a.name] = {"runs": len(per), "seconds": dt, "highs_seconds": lp_s,
                              "ms_per_lp": 1e3 * lp_s / (a.episodes * len(per))}
            print(f"  {a.name}: {len(per)} runs x {a.episodes} episodes, {dt:.1f}s "
                  f"(HiGHS {timing[a.name]['ms_per_lp']:.2f} ms per LP)", flush=True)
        write_npz(ctx.path(RESULTS), results)                 # byte-reproducible: same runs, same hash
        write_json(ctx.path(TRAIN_METRICS), {
            "timing": timing,
            "agents": {a.name: {"kind": a.kind, "episodes": a.episodes, "runs": len(runs[a.name]),
                                "setups": a.setups} for a in tp.agents}})


if __name__ == "__main__":
    main()
