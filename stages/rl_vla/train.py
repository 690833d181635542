"""rl_vla train: SFT on the expert's demonstrations, then PPO, GRPO and DPO from the SFT weights.

* ``sft``: behaviour cloning of a fresh policy (stages/rl_vla/policy.py) on data/rl_vla/demos.npz.
* ``ppo``: stable-baselines3's PPO (the maintained library, run for real) from the SFT weights, on
  the training split, shared actor-critic backbone (a fresh value head).
* ``ppo_short``: the same PPO with ``short_frac`` of the steps: the ablation in which the checks
  should fail (too little RL).
* ``grpo``, ``dpo``: our own (the shared core, stages/common/pg.py), from the SFT weights, with PPO's step budget.

Every policy is saved as an MLflow pyfunc model (data/rl_vla/models/<method>), logged and registered.
Outputs: data/rl_vla/models and reports/rl_vla/train.json (losses, training success curves' ends).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DEMOS, MODELS, TRAIN_METRICS

METHODS = ("sft", "ppo", "ppo_short", "grpo", "dpo")


def main() -> None:
    with stage("rl_vla", "train", PARAMS) as ctx:
        import tempfile
        import time
        from pathlib import Path

        import numpy as np
        import torch

        from stages.common.device import limit_threads
        from stages.common.io import atomic_dir, write_json
        from stages.common.mlmodel import save_pyfunc

        from . import methods
        from .env import PickPlaceEnv
        from .policy import load_state, make_policy, policy_kwargs, save_files, state_bytes

        limit_threads()        # one thread: a tiny CNN on 66 x 66 pictures gains nothing from two
        p = ctx.params.train
        env_kw = ctx.params.env.model_dump()
        arch = {"cell": env_kw["cell"], **p.arch.model_dump()}
        with np.load(ctx.path(DEMOS)) as z:
            data = {k: z[k] for k in z.files}
        env = PickPlaceEnv(**env_kw)

        def fresh():
            return make_policy(env.observation_space, env.action_space, **arch)

        torch.manual_seed(ctx.seed)
        gen = torch.Generator().manual_seed(ctx.seed)
        report, cpu, policies = {}, {}, {}
        t0 = time.process_time()
        sft_policy = fresh()
        losses = methods.sft(sft_policy, data, p.sft.epochs, p.sft.batch, p.sft.lr, gen)
        cpu["sft"] = time.process_time() - t0
        ctx.run.log_curve("sft.loss", losses)
        report["sft"] = {"loss_first": losses[0], "loss_last": losses[-1], "demo_steps": int(len(data["action"]))}
        policies["sft"] = sft_policy
        sft_state = state_bytes(sft_policy)

        pkw = policy_kwargs(**arch)
        for name, frac in (("ppo", 1.0), ("ppo_short", p.ppo.short_frac)):
            t0 = time.process_time()
            pp = p.ppo.model_copy(update={"env_steps": max(64, int(round(p.ppo.env_steps * frac)))})
            policies[name], curve = methods.ppo(sft_state, pp, env_kw, ctx.seed, pkw)
            cpu[name] = time.process_time() - t0
            ctx.run.log_curve(f"{name}.train_success", curve)
            k = max(1, len(curve) // 5)
            report[name] = {"env_steps": pp.env_steps, "episodes": len(curve),
                            "train_success_first": float(np.mean(curve[:k])) if curve else None,
                            "train_success_last": float(np.mean(curve[-k:])) if curve else None}

        t0 = time.process_time()
        policies["grpo"] = load_state(fresh(), sft_state)
        curve = methods.grpo(policies["grpo"], p.grpo, env_kw, ctx.seed, gen)
        cpu["grpo"] = time.process_time() - t0
        ctx.run.log_curve("grpo.train_success", curve)
        report["grpo"] = {"iterations": len(curve), "train_success_first": curve[0], "train_success_last": curve[-1]}

        t0 = time.process_time()
        policies["dpo"] = load_state(fresh(), sft_state)
        reference = load_state(fresh(), sft_state)
        curve = methods.dpo(policies["dpo"], reference, p.dpo, env_kw, ctx.seed, gen)
        cpu["dpo"] = time.process_time() - t0
        ctx.run.log_curve("dpo.train_success", curve)
        report["dpo"] = {"collections": len(curve), "train_success_first": curve[0], "train_success_last": curve[-1]}

        t0 = time.process_time()
        with atomic_dir(ctx.path(MODELS)) as out, tempfile.TemporaryDirectory() as scratch:
            for name in METHODS:
                files = Path(scratch) / name
                files.mkdir()
                save_pyfunc(out / name, Path(__file__).with_name("pyfunc.py"),
                            save_files(policies[name], files, env_kw, p.arch.model_dump()))
        for name in METHODS:
            ctx.run.log_model(ctx.path(MODELS) / name, f"{name}", params={"method": name})
        cpu["save"] = time.process_time() - t0
        write_json(ctx.path(TRAIN_METRICS), report)
        ctx.run.log_metrics({f"cpu_s.{k}": v for k, v in cpu.items()})    # timings: MLflow only
        print("  CPU s: " + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()), flush=True)


if __name__ == "__main__":
    main()
