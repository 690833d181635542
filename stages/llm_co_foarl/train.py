"""llm_co_foarl train: SFT on the solver's solutions, then FOARL from the SFT model, and an
equal-compute control that spends FOARL's update budget on more SFT instead.

SFT: teacher forcing on OR-Tools optima, each step a batch of freshly relabelled (and, for TSP,
rotated/reflected) copies of the solved training instances. FOARL: GRPO with the official code's
feasibility + optimality reward (model.py, problems.py). Control: as many SFT updates as FOARL made
(one per problem per step), each on a batch as large as FOARL's (prompts x group sequences).
Outputs: data/llm_co_foarl/models (sft.pt, foarl.pt, sft_more.pt, config.json),
data/llm_co_foarl/mlflow_model (the FOARL model, registered as ``llm_co_foarl-foarl``) and
reports/llm_co_foarl/train.json (losses, FOARL curve, CPU seconds per phase).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATASET, MLFLOW_MODEL, MODELS, TRAIN_METRICS


def main() -> None:
    with stage("llm_co_foarl", "train", PARAMS) as ctx:
        import copy
        import json

        import numpy as np

        from stages.common.device import limit_threads, select_device
        from stages.common.io import atomic_dir, write_json

        from . import core
        from .store import config_of, save_mlflow

        limit_threads(default=1)
        import torch

        p = ctx.params.train
        data = json.loads(ctx.path(DATASET).read_text())
        train = {prob: d["train"] for prob, d in data.items()}
        size = {prob: (len(d["train"][0]["pts"]) if prob == "tsp" else len(d["train"][0]["items"]))
                for prob, d in data.items()}
        device = select_device(ctx.common.device)
        torch.manual_seed(ctx.seed)
        rng = np.random.default_rng([ctx.seed, 10])
        cfg = config_of(p)
        model = core.make_model(p).to(device)
        sft_curve: list = []
        sft_cpu = core.train_sft(model, train, p.sft_steps, p.batch, p.lr, rng, curve=sft_curve, device=device)
        print(f"  SFT: {p.sft_steps} steps, {sft_cpu:.1f} s CPU, final loss {np.mean(sft_curve[-20:]):.3f}", flush=True)

        rl = copy.deepcopy(model)
        rl_curve: list = []
        rl_cpu = core.train_foarl(rl, train, size, p.rl_steps, p.rl_prompts, p.rl_group, p.rl_lr, p.beta,
                                  np.random.default_rng([ctx.seed, 11]), ctx.seed, rl_curve, device=device)
        print(f"  FOARL: {p.rl_steps} steps, {rl_cpu:.1f} s CPU", flush=True)

        ctrl = copy.deepcopy(model)
        ctrl_steps = p.rl_steps * len(train)
        ctrl_curve: list = []
        ctrl_cpu = core.train_sft(ctrl, train, ctrl_steps, p.rl_prompts * p.rl_group, p.control_lr,
                                  np.random.default_rng([ctx.seed, 12]), progress="sft control",
                                  curve=ctrl_curve, device=device)
        print(f"  SFT control: {ctrl_steps} steps of {p.rl_prompts * p.rl_group}, {ctrl_cpu:.1f} s CPU", flush=True)

        with atomic_dir(ctx.path(MODELS)) as tmp:
            for name, m in (("sft", model), ("foarl", rl), ("sft_more", ctrl)):
                torch.save({k: v.cpu() for k, v in m.state_dict().items()}, tmp / f"{name}.pt")
            (tmp / "config.json").write_text(json.dumps(cfg, indent=1, sort_keys=True))
        save_mlflow(ctx.path(MLFLOW_MODEL), ctx.path(MODELS) / "foarl.pt", ctx.path(MODELS) / "config.json")
        ctx.run.log_model(ctx.path(MLFLOW_MODEL), "foarl", params={**cfg, "sft_steps": p.sft_steps,
                                                                   "rl_steps": p.rl_steps})
        ctx.run.log_curve("sft_loss", sft_curve)
        ctx.run.log_curve("control_sft_loss", ctrl_curve)
        for prob in train:
            rows = [r for r in rl_curve if r["problem"] == prob]
            ctx.run.log_curve(f"foarl_reward_{prob}", [r["reward"] for r in rows])
            ctx.run.log_curve(f"foarl_feasible_{prob}", [r["feasible"] for r in rows])
        write_json(ctx.path(TRAIN_METRICS), {
            "cpu_s": {"sft": round(sft_cpu, 2), "foarl": round(rl_cpu, 2), "sft_control": round(ctrl_cpu, 2)},
            "sft_final_loss": float(np.mean(sft_curve[-20:])),
            "control_final_loss": float(np.mean(ctrl_curve[-5:])),
            "control_updates": ctrl_steps, "foarl_updates": p.rl_steps * len(train),
            "foarl_curve": rl_curve,
        })


if __name__ == "__main__":
    main()
