"""noisy_grpo train: SFT warm-up on the partly wrong chains, then RL from that one SFT policy with
each method: GRPO, NoisyGRPO (noise-injected rollouts + Bayesian advantage) and its two ablations
(noise only; Bayesian advantage only, which without noise has a flat prior).

Outputs: data/noisy_grpo/policies.pt (the state dict of the SFT policy and of each RL run, ``method.replicate``), data/noisy_grpo/model (the
NoisyGRPO policy as an MLflow pyfunc model, logged and registered) and reports/noisy_grpo/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATASET, MODEL, POLICIES, TRAIN_METRICS


def main() -> None:
    with stage("noisy_grpo", "train", PARAMS) as ctx:
        import copy
        import io
        import time

        import numpy as np
        import torch
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json

        from .core import METHODS, Policy, rl, sft

        limit_threads(1)              # a 30k-parameter model gains nothing from two threads
        d = np.load(ctx.path(DATASET))
        pp, p = ctx.params.prepare, ctx.params.train
        img, q, cnt, chain = (torch.as_tensor(d[k]) for k in ("img", "q", "counts", "chain"))
        torch.manual_seed(ctx.seed)
        policy = Policy(pp.grid, pp.max_per_colour + 1, d_model=p.d_model)
        gen = torch.Generator().manual_seed(ctx.seed)
        t0 = time.process_time()
        losses = sft(policy, img, q, chain, p.sft_steps, p.sft_batch, p.sft_lr, gen)
        ctx.run.log_curve("sft.loss", losses)
        ref = copy.deepcopy(policy).requires_grad_(False)
        states, out = {"sft": copy.deepcopy(policy.state_dict())}, {"sft_loss_last": losses[-1]}
        runs = [(m, r) for m in METHODS for r in range(p.replicates)]
        for m, r in tqdm(runs, desc="noisy_grpo: RL runs"):
            pol = copy.deepcopy(policy)
            g = torch.Generator().manual_seed(ctx.seed * 1000 + 1 + r)   # every method: the same prompts per replicate
            curve = rl(pol, ref, img, q, cnt, m, p.rl_steps, p.prompts, p.group, p.rl_lr, p.clip, p.beta,
                       p.epochs, p.sigma_start, p.sigma_end, p.prior_var, p.obs_var, g)
            ctx.run.log_curve(f"{m}.{r}.train_reward", curve)
            states[f"{m}.{r}"] = pol.state_dict()
            out[f"{m}.{r}_train_reward_last"] = float(np.mean(curve[-max(1, len(curve) // 10):]))
        cpu = time.process_time() - t0
        buf = io.BytesIO()
        torch.save(states, buf)
        write_bytes(ctx.path(POLICIES), buf.getvalue())
        save_model(ctx, states["noisy_grpo.0"], pp, p)
        ctx.run.log_metrics({"train_cpu_s": cpu, "rl_steps_per_cpu_s": len(METHODS) * p.rl_steps / max(cpu, 1e-9)})
        write_json(ctx.path(TRAIN_METRICS), out)


def save_model(ctx, state, pp, p) -> None:
    """The NoisyGRPO policy as an MLflow pyfunc (models from code: stages/noisy_grpo/pyfunc.py)."""
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
                    {"weights": Path(tmp) / "weights.pt", "config": Path(tmp) / "config.json"})
    ctx.run.log_model(ctx.path(MODEL), "noisy_grpo_policy", params=p.model_dump())


if __name__ == "__main__":
    main()
