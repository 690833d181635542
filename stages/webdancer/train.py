"""webdancer train: (3) the SFT cold start, then (4) RL, and the controls.

* ``sft``: a fresh tiny transformer trained by cross-entropy on the kept trajectories.
* ``sft_rl``: RL (GRPO group advantages, DAPO clip-higher, stages/common/pg.py) from the SFT weights
  on the RL questions (not used by SFT); reward 1 for the right answer.
* ``rl_scratch``: the same RL, same budget, from random weights (no cold start).
* ``sft_rl_coin``: the control in which SFT+RL > SFT should not hold: the same RL from the SFT
  weights with a fair-coin reward, unrelated to the answer.
* ``sft_equal``: the must's control (issue 42): SFT only, on the data RL uses as well: the cold
  start's trajectories plus the same sampling and rejection on the RL questions, same model,
  epochs, batch and learning rate as the cold start (RL replaced by SFT on its questions).

Every verdict seed (``ctx.seeds``) is trained in this process, one after another (run_seeds).
Every agent is saved as an MLflow pyfunc model (data/webdancer/models/<seed>/<agent>), its input
example the first three observations of the seed's cold-start trajectories; the first verdict
seed's agents are logged and registered.
Outputs: data/webdancer/models and reports/webdancer/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATA, MODELS, TRAIN_METRICS

AGENTS = ("sft", "sft_rl", "rl_scratch", "sft_rl_coin", "sft_equal")


def train_seed(lay, env, p, sites: dict, qs: dict, traj: dict, seed: int, log=None) -> tuple[dict, dict, dict]:
    """Every agent of one seed: (policies, report, CPU seconds). Each arm's draws come from the
    seed's own generators, so a seed's agents do not depend on the other seeds run beside it."""
    import time

    import numpy as np
    import torch

    from . import agent

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    arch = p.arch.model_dump()
    report, cpu, pols = {}, {}, {}

    t0 = time.process_time()
    pols["sft"] = agent.make_policy(lay, **arch)
    losses = agent.sft(pols["sft"], traj["obs"], traj["act"], p.sft.epochs, p.sft.batch, p.sft.lr, gen)
    cpu["sft"] = time.process_time() - t0
    if log:
        log("sft.loss", losses)
    report["sft"] = {"loss_first": losses[0], "loss_last": losses[-1], "steps": int(len(traj["act"]))}
    sft_state = agent.state_bytes(pols["sft"])

    r = p.rl
    for name, init, coin in (("sft_rl", True, False), ("rl_scratch", False, False), ("sft_rl_coin", True, True)):
        t0 = time.process_time()
        pol = agent.make_policy(lay, **arch)
        if init:
            agent.load_state(pol, sft_state)
        rng = np.random.default_rng([seed, 10 + len(pols)])
        curve = agent.rl(pol, lay, sites["train"], qs["rl"], env.max_steps, r.iterations, r.questions, r.group,
                         r.lr, r.clip, r.clip_high, r.epochs, gen, rng, reward_noise=coin)
        cpu[name] = time.process_time() - t0
        pols[name] = pol
        if log:
            log(f"{name}.train_reward", curve)
        k = max(1, len(curve) // 5)
        report[name] = {"iterations": len(curve), "episodes": len(curve) * r.questions * r.group,
                        "train_reward_first": float(np.mean(curve[:k])), "train_reward_last": float(np.mean(curve[-k:]))}
        print(f"  seed {seed} {name}: training reward {report[name]['train_reward_first']:.3f} -> "
              f"{report[name]['train_reward_last']:.3f} ({cpu[name]:.1f} CPU s)", flush=True)

    # the must's control: SFT (same model, same epochs and batch) from random weights on the cold
    # start's trajectories plus those sampled on the RL questions: the data RL uses, by SFT
    t0 = time.process_time()
    pols["sft_equal"] = agent.make_policy(lay, **arch)
    g_eq = torch.Generator().manual_seed(int(np.random.SeedSequence([seed, 20]).generate_state(1)[0]))
    losses = agent.sft(pols["sft_equal"], traj["eq_obs"], traj["eq_act"], p.sft.epochs, p.sft.batch, p.sft.lr, g_eq)
    cpu["sft_equal"] = time.process_time() - t0
    if log:
        log("sft_equal.loss", losses)
    report["sft_equal"] = {"loss_first": losses[0], "loss_last": losses[-1], "steps": int(len(traj["eq_act"]))}
    print(f"  seed {seed} sft_equal: {len(traj['eq_act'])} steps, loss {losses[0]:.3f} -> {losses[-1]:.3f} "
          f"({cpu['sft_equal']:.1f} CPU s)", flush=True)
    return pols, report, cpu


def main() -> None:
    with stage("webdancer", "train", PARAMS) as ctx:
        import tempfile
        import time
        from pathlib import Path

        import pandas as pd

        from stages.common.device import limit_threads
        from stages.common.io import atomic_dir, write_json
        from stages.common.mlmodel import save_pyfunc
        from stages.common.seeds import per_seed_metrics, run_seeds

        from . import agent
        from .web import Layout

        limit_threads()          # one thread: a 32-wide transformer gains nothing from two
        p, env = ctx.params.train, ctx.params.env
        lay = Layout(env.k, env.depth, env.n_topics, env.n_values)
        pols, reports, cpus, examples = {}, {}, {}, {}

        def one(seed: int) -> dict:
            sites, qs, traj = agent.load_data(ctx.path(DATA), seed)
            # the seed's models' input example: the first three observations of its cold-start trajectories
            examples[seed] = pd.DataFrame({"obs": [[int(t) for t in o] for o in traj["obs"][:3]]})
            pols[seed], reports[seed], cpus[seed] = train_seed(
                lay, env, p, sites, qs, traj, seed, log=lambda k, v: ctx.run.log_curve(f"seed{seed}.{k}", v))
            return reports[seed]

        run_seeds(ctx.seeds, one, what="seed")
        t0 = time.process_time()
        with atomic_dir(ctx.path(MODELS)) as out, tempfile.TemporaryDirectory() as scratch:
            for seed in ctx.seeds:
                for name in AGENTS:
                    files = Path(scratch) / str(seed) / name
                    files.mkdir(parents=True)
                    save_pyfunc(out / str(seed) / name, Path(__file__).with_name("pyfunc.py"),
                                agent.save_files(pols[seed][name], files), input_example=examples[seed])
        for name in AGENTS:          # one registered model per agent: the first verdict seed's
            ctx.run.log_model(ctx.path(MODELS) / str(ctx.seeds[0]) / name, name,
                              params={"agent": name, "seed": ctx.seeds[0]})
        save_s = time.process_time() - t0
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(reports, cpu_s={str(s): cpus[s] for s in ctx.seeds}))
        total = {k: sum(c[k] for c in cpus.values()) for k in AGENTS}
        ctx.run.log_metrics({f"cpu_s.{k}": v for k, v in total.items()} | {"cpu_s.save": save_s})
        print("  CPU s over the seeds: " + ", ".join(f"{k} {v:.1f}" for k, v in total.items()) + f", save {save_s:.1f}",
              flush=True)


if __name__ == "__main__":
    main()
