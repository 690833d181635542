"""noisy_grpo train, for every verdict seed in one process (stages.common.seeds.run_seeds): SFT
warm-up on the seed's partly wrong chains, then RL from that one SFT policy with each method: GRPO, NoisyGRPO (noise-injected rollouts + Bayesian advantage) and its two ablations
(noise only; Bayesian advantage only, which without noise has a flat prior).

Outputs: data/noisy_grpo/policies.pt (per seed, the state dict of the SFT policy and of each RL run,
``<seed>/sft``, ``<seed>/method.replicate``), data/noisy_grpo/model (the first seed's
NoisyGRPO policy as an MLflow pyfunc model, logged and registered; its input example: the first
seed's first two ID test images and first OOD one) and reports/noisy_grpo/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATASET, MODEL, POLICIES, TRAIN_METRICS


def main() -> None:
    with stage("noisy_grpo", "train", PARAMS) as ctx:
        import io
        import time

        import numpy as np
        import torch

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .core import DATA_KEYS, policy_frame, train_seed

        limit_threads(1)              # a 30k-parameter model gains nothing from two threads
        d = np.load(ctx.path(DATASET))
        pp, p = ctx.params.prepare, ctx.params.train
        t0 = time.process_time()

        def one(seed: int):
            data = {k: d[f"s{seed}.{k}"] for k in DATA_KEYS}
            states, out, curves = train_seed(seed, data, pp, p)
            for name, curve in curves.items():
                ctx.run.log_curve(f"seed{seed}.{name}", curve)
            return states, out

        res = run_seeds(ctx.seeds, one, what="noisy_grpo seed")   # one process: the models are tiny
        cpu = time.process_time() - t0
        states = {f"{seed}/{k}": v for seed, (st, _) in res.items() for k, v in st.items()}
        buf = io.BytesIO()
        torch.save(states, buf)
        write_bytes(ctx.path(POLICIES), buf.getvalue())
        first = ctx.seeds[0]
        # the input example: the first seed's first two clean (ID) test images and its first OOD one
        example = policy_frame(np.concatenate([d[f"s{first}.id_img"][:2], d[f"s{first}.ood_img"][:1]]),
                               np.concatenate([d[f"s{first}.id_q"][:2], d[f"s{first}.ood_q"][:1]]))
        save_model(ctx, states[f"{first}/noisy_grpo.0"], pp, p, example)
        runs = len(ctx.seeds) * 4 * p.replicates
        ctx.run.log_metrics({"train_cpu_s": cpu, "rl_steps_per_cpu_s": runs * p.rl_steps / max(cpu, 1e-9)})
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics({s: out for s, (_, out) in res.items()},
                                                             train_cpu_s=cpu, model_seed=first))


def save_model(ctx, state, pp, p, example) -> None:
    """The NoisyGRPO policy as an MLflow pyfunc (models from code: stages/noisy_grpo/pyfunc.py), with
    ``example`` (core.policy_frame's rows) as its input example, from which MLflow infers its signature."""
    import io
    import json
    import tempfile
    from pathlib import Path

    import torch

    from stages.common.mlmodel import save_pyfunc

    with tempfile.TemporaryDirectory() as tmp:
        buf = io.BytesIO()
        torch.save(state, buf)
        (Path(tmp) / "weights.pt").write_bytes(buf.getvalue())
        (Path(tmp) / "config.json").write_text(json.dumps({"grid": pp.grid, "vocab": pp.max_per_colour + 1,
                                                           "d_model": p.d_model}))
        save_pyfunc(ctx.path(MODEL), Path(__file__).with_name("pyfunc.py"),
                    {"weights": Path(tmp) / "weights.pt", "config": Path(tmp) / "config.json"},
                    input_example=example)
    ctx.run.log_model(ctx.path(MODEL), "noisy_grpo_policy", params=p.model_dump())


if __name__ == "__main__":
    main()
