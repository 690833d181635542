"""webdancer train: (3) the SFT cold start, then (4) RL, and the controls.

* ``sft``: a fresh tiny transformer trained by cross-entropy on the kept trajectories.
* ``sft_rl``: RL (GRPO group advantages, DAPO clip-higher, stages/common/pg.py) from the SFT weights
  on the RL questions (not used by SFT); reward 1 for the right answer.
* ``rl_scratch``: the same RL, same budget, from random weights (no cold start).
* ``sft_rl_coin``: the control in which SFT+RL > SFT should not hold: the same RL from the SFT
  weights with a fair-coin reward, unrelated to the answer.

Every agent is saved as an MLflow pyfunc model (data/webdancer/models/<agent>), logged and registered.
Outputs: data/webdancer/models and reports/webdancer/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATA, MODELS, TRAIN_METRICS

AGENTS = ("sft", "sft_rl", "rl_scratch", "sft_rl_coin")


def main() -> None:
    with stage("webdancer", "train", PARAMS) as ctx:
        import tempfile
        import time
        from pathlib import Path

        import numpy as np
        import torch

        from stages.common.device import limit_threads
        from stages.common.io import atomic_dir, write_json
        from stages.common.mlmodel import save_pyfunc

        from . import agent
        from .web import Layout

        limit_threads()          # one thread: a 32-wide transformer gains nothing from two
        p, env = ctx.params.train, ctx.params.env
        lay = Layout(env.k, env.depth, env.n_topics, env.n_values)
        sites, qs, traj = agent.load_data(ctx.path(DATA))
        torch.manual_seed(ctx.seed)
        gen = torch.Generator().manual_seed(ctx.seed)
        arch = p.arch.model_dump()
        report, cpu, pols = {}, {}, {}

        t0 = time.process_time()
        pols["sft"] = agent.make_policy(lay, **arch)
        losses = agent.sft(pols["sft"], traj["obs"], traj["act"], p.sft.epochs, p.sft.batch, p.sft.lr, gen)
        cpu["sft"] = time.process_time() - t0
        ctx.run.log_curve("sft.loss", losses)
        report["sft"] = {"loss_first": losses[0], "loss_last": losses[-1], "steps": int(len(traj["act"]))}
        sft_state = agent.state_bytes(pols["sft"])

        r = p.rl
        for name, init, coin in (("sft_rl", True, False), ("rl_scratch", False, False), ("sft_rl_coin", True, True)):
            t0 = time.process_time()
            pol = agent.make_policy(lay, **arch)
            if init:
                agent.load_state(pol, sft_state)
            rng = np.random.default_rng([ctx.seed, 10 + len(pols)])
            curve = agent.rl(pol, lay, sites["train"], qs["rl"], env.max_steps, r.iterations, r.questions, r.group,
                             r.lr, r.clip, r.clip_high, r.epochs, gen, rng, reward_noise=coin)
            cpu[name] = time.process_time() - t0
            pols[name] = pol
            ctx.run.log_curve(f"{name}.train_reward", curve)
            k = max(1, len(curve) // 5)
            report[name] = {"iterations": len(curve), "episodes": len(curve) * r.questions * r.group,
                            "train_reward_first": float(np.mean(curve[:k])), "train_reward_last": float(np.mean(curve[-k:]))}
            print(f"  {name}: training reward {report[name]['train_reward_first']:.3f} -> "
                  f"{report[name]['train_reward_last']:.3f} ({cpu[name]:.1f} CPU s)", flush=True)

        t0 = time.process_time()
        with atomic_dir(ctx.path(MODELS)) as out, tempfile.TemporaryDirectory() as scratch:
            for name in AGENTS:
                files = Path(scratch) / name
                files.mkdir()
                save_pyfunc(out / name, Path(__file__).with_name("pyfunc.py"), agent.save_files(pols[name], files))
        for name in AGENTS:
            ctx.run.log_model(ctx.path(MODELS) / name, name, params={"agent": name})
        cpu["save"] = time.process_time() - t0
        write_json(ctx.path(TRAIN_METRICS), report)
        ctx.run.log_metrics({f"cpu_s.{k}": v for k, v in cpu.items()})
        print("  CPU s: " + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()), flush=True)


if __name__ == "__main__":
    main()
