"""rl_vla train: per verdict seed, SFT on the expert's demonstrations, then PPO, GRPO, DPO and the
control ``sft_more`` from the SFT weights, each on the same environment-step budget.

* ``sft``: behaviour cloning of a fresh policy (stages/rl_vla/policy.py) on the seed's demonstrations.
* ``ppo``: stable-baselines3's PPO (the maintained library, run for real) from the SFT weights, on
  the training split (the critic has its own extractor and a fresh value head).
* ``sft_more``: the control, the fair baseline the paper argues against: SFT continued from the SFT
  weights on fresh expert demonstrations of the training split worth the RL arms' environment-step
  budget (``stages.rl_vla.data.more_demos``, drawn here again from the seed): the same amount of new experience as PPO's, with
  the expert's actions as labels instead of a reward.
* ``grpo``, ``dpo``: our own (the shared core, stages/common/pg.py), from the SFT weights, with PPO's step budget.

Each seed is an independent repetition: every draw of a seed's arms comes from that seed (torch's
global seed set per arm, generators from ``stages.common.seeds.torch_generator(seed, stream)``), so a
seed's policies do not depend on which other seeds ran. Every policy is saved as an MLflow pyfunc
model (data/rl_vla/models/<seed>/<method>); the first verdict seed's are logged and registered.
Outputs: data/rl_vla/models and reports/rl_vla/train.json (per_seed: losses, training success ends).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DEMOS, MODELS, TRAIN_METRICS

METHODS = ("sft", "ppo", "sft_more", "grpo", "dpo")
STREAMS = {"sft": 1, "sft_more": 2, "grpo": 3, "dpo": 4}


def fresh_policy(env_kw: dict, arch: dict):
    from .env import PickPlaceEnv
    from .policy import make_policy

    env = PickPlaceEnv(**env_kw)
    return make_policy(env.observation_space, env.action_space, cell=env_kw["cell"], **arch)


def train_sft(t, sp, env_kw: dict, data: dict, seed: int) -> tuple:
    """A fresh policy cloned on ``data`` with SFT settings ``sp``: (policy, losses per epoch)."""
    import torch

    from stages.common.seeds import torch_generator

    from . import methods

    torch.manual_seed(seed)
    policy = fresh_policy(env_kw, t.arch.model_dump())
    losses = methods.sft(policy, data, sp.epochs, sp.batch, sp.lr, torch_generator(seed, STREAMS["sft"]))
    return policy, losses


def fine_tune(arm: str, t, env_kw: dict, sft_state: bytes, more: dict, seed: int) -> tuple:
    """One fine-tuning arm (ppo, grpo, dpo, sft_more) from the SFT weights with the
    settings of ``t`` (TrainStep): (policy, report)."""
    import numpy as np
    import torch

    from stages.common.seeds import torch_generator

    from . import methods
    from .policy import load_state, policy_kwargs

    arch = t.arch.model_dump()
    torch.manual_seed(seed)
    if arm == "ppo":
        policy, curve = methods.ppo(sft_state, t.ppo, env_kw, seed, policy_kwargs(cell=env_kw["cell"], **arch))
        k = max(1, len(curve) // 5)
        return policy, {"env_steps": t.ppo.env_steps, "episodes": len(curve),
                        "train_success_first": float(np.mean(curve[:k])) if curve else None,
                        "train_success_last": float(np.mean(curve[-k:])) if curve else None}
    policy = load_state(fresh_policy(env_kw, arch), sft_state)
    gen = torch_generator(seed, STREAMS[arm])
    if arm == "sft_more":
        losses = methods.sft(policy, more, t.sft_more.epochs, t.sft_more.batch, t.sft_more.lr, gen)
        return policy, {"demo_steps": int(len(more["action"])), "loss_first": losses[0], "loss_last": losses[-1]}
    if arm == "grpo":
        curve = methods.grpo(policy, t.grpo, env_kw, seed, gen)
        return policy, {"iterations": len(curve), "train_success_first": curve[0], "train_success_last": curve[-1]}
    if arm == "dpo":
        reference = load_state(fresh_policy(env_kw, arch), sft_state)
        curve = methods.dpo(policy, reference, t.dpo, env_kw, seed, gen)
        return policy, {"collections": len(curve), "train_success_first": curve[0], "train_success_last": curve[-1]}
    raise ValueError(f"unknown arm {arm!r}; one of {METHODS[1:]}")


def train_seed(p, data: dict, more: dict, seed: int) -> tuple[dict, dict, dict]:
    """Every method of one seed: ({method: policy}, {method: report}, {method: CPU s})."""
    import time

    from .policy import state_bytes

    t, env_kw = p.train, p.env.model_dump()
    policies, report, cpu = {}, {}, {}
    c0 = time.process_time()
    policies["sft"], losses = train_sft(t, t.sft, env_kw, data, seed)
    cpu["sft"] = time.process_time() - c0
    print(f"    seed {seed}: sft done ({cpu['sft']:.1f} CPU s)", flush=True)   # progress: a seed is ~30 s
    report["sft"] = {"loss_first": losses[0], "loss_last": losses[-1], "demo_steps": int(len(data["action"]))}
    sft_state = state_bytes(policies["sft"])
    for arm in METHODS[1:]:
        c0 = time.process_time()
        policies[arm], report[arm] = fine_tune(arm, t, env_kw, sft_state, more, seed)
        cpu[arm] = time.process_time() - c0
        print(f"    seed {seed}: {arm} done ({cpu[arm]:.1f} CPU s)", flush=True)
    return policies, report, cpu


def load_seed_data(path, p, seed: int) -> tuple[dict, dict]:
    """One seed's (SFT demos from data/rl_vla/demos.npz, the control's demos drawn again)."""
    import numpy as np

    from .data import FIELDS, more_demos

    with np.load(path) as z:
        if f"{seed}/action" not in z.files:
            raise ValueError(f"{path} holds no data for seed {seed}: run the rl_vla-prepare stage for this profile")
        data = {k: z[f"{seed}/{k}"] for k in FIELDS}
    return data, more_demos(p, seed)[0]


def main() -> None:
    with stage("rl_vla", "train", PARAMS) as ctx:
        import tempfile
        import time
        from pathlib import Path

        import pandas as pd

        from stages.common.device import limit_threads
        from stages.common.io import atomic_dir, write_json
        from stages.common.mlmodel import save_pyfunc
        from stages.common.seeds import per_seed_metrics

        from .policy import save_files

        limit_threads()        # one thread: a tiny CNN on 66 x 66 pictures gains nothing from two
        p = ctx.params
        env_kw = p.env.model_dump()
        reports, t_all = {}, time.perf_counter()
        with atomic_dir(ctx.path(MODELS)) as out, tempfile.TemporaryDirectory() as scratch:
            for i, seed in enumerate(ctx.seeds):
                data, more = load_seed_data(ctx.path(DEMOS), p, seed)
                t0 = time.perf_counter()
                policies, reports[seed], cpu = train_seed(p, data, more, seed)
                # the input example (MLflow infers the signature from it): the seed's first two SFT demo observations
                # (two, not three: each is 13068 pixel values, and the example is stored twice per model)
                example = pd.DataFrame({"image": [im.ravel().tolist() for im in data["image"][:2]],
                                        "instruction": [ins.tolist() for ins in data["instruction"][:2]]})
                for name in METHODS:
                    files = Path(scratch) / str(seed) / name
                    files.mkdir(parents=True)
                    save_pyfunc(out / str(seed) / name, Path(__file__).with_name("pyfunc.py"),
                                save_files(policies[name], files, env_kw, p.train.arch.model_dump()),
                                input_example=example)
                ctx.run.log_metrics({f"cpu_s.{seed}.{k}": v for k, v in cpu.items()})   # timings: MLflow only
                print(f"  seed {seed} ({i + 1}/{len(ctx.seeds)}) in {time.perf_counter() - t0:.1f}s (total "
                      f"{time.perf_counter() - t_all:.1f}s); CPU s: " + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()),
                      flush=True)
        first = ctx.seeds[0]
        for name in METHODS:
            ctx.run.log_model(ctx.path(MODELS) / str(first) / name, name, params={"method": name, "seed": first})
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics(reports))


if __name__ == "__main__":
    main()
