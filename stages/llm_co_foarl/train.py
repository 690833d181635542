"""llm_co_foarl train: per verdict seed, SFT on the solver's solutions, then FOARL from the SFT
model, and an equal-compute control that spends FOARL's update budget on more SFT instead.

SFT: teacher forcing on OR-Tools optima, each step a batch of freshly relabelled (and, for TSP,
rotated/reflected) copies of the solved training instances; its learning curve (greedy gap and
feasible rate on a slice of the test instances) is recorded. FOARL: GRPO with the official code's
feasibility + optimality reward (model.py, problems.py). Control: as many SFT updates as FOARL made
(one per problem per step), each on a batch as large as FOARL's (prompts x group sequences).
The verdict seeds (``ctx.seeds``) run one after another in this process
(stages.common.seeds.run_seeds); each seed's draws come from its own generators (core.train_seed).
Outputs: data/llm_co_foarl/models (seed_<s>/{sft,foarl,sft_more}.pt, config.json),
data/llm_co_foarl/mlflow_model (the first verdict seed's FOARL model, registered as
``llm_co_foarl-foarl``; its input example: the first test instance of each problem) and reports/llm_co_foarl/train.json (per seed: learning curve, FOARL curve,
losses, CPU seconds per phase).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATASET, MLFLOW_MODEL, MODELS, TRAIN_METRICS, seed_dir


def main() -> None:
    with stage("llm_co_foarl", "train", PARAMS) as ctx:
        import json
        from pathlib import Path

        from stages.common.device import limit_threads, select_device
        from stages.common.io import atomic_dir, write_json
        from stages.common.seeds import run_seeds

        from . import core
        from .store import config_of, example_frame, save_mlflow

        limit_threads(default=1)
        import torch

        p = ctx.params.train
        data = json.loads(ctx.path(DATASET).read_text())
        device = select_device(ctx.common.device)
        cfg = config_of(p)
        seeds = list(ctx.seeds)
        with atomic_dir(ctx.path(MODELS)) as tmp:
            def one(seed: int) -> dict:
                out = core.train_seed(data, p, seed, device=device, log=lambda m: print(m, flush=True))
                folder = tmp / Path(seed_dir(".", seed)).name
                folder.mkdir()
                for name, m in out["models"].items():
                    torch.save({k: v.cpu() for k, v in m.state_dict().items()}, folder / f"{name}.pt")
                return out["metrics"]

            per_seed = run_seeds(seeds, one, what="verdict seed")
            (tmp / "config.json").write_text(json.dumps(cfg, indent=1, sort_keys=True))
        first = ctx.path(seed_dir(MODELS, seeds[0]))
        save_mlflow(ctx.path(MLFLOW_MODEL), first / "foarl.pt", ctx.path(MODELS) / "config.json",
                    example_frame(data))
        ctx.run.log_model(ctx.path(MLFLOW_MODEL), "foarl", params={**cfg, "sft_steps": p.sft_steps,
                                                                   "rl_steps": p.rl_steps, "seed": seeds[0]})
        for seed, m in per_seed.items():
            ctx.run.log_curve(f"sft_loss_seed{seed}", m["sft_loss"])
            ctx.run.log_curve(f"control_sft_loss_seed{seed}", [m["control_final_loss"]])
            for prob in data:
                rows = [r for r in m["foarl_curve"] if r["problem"] == prob]
                ctx.run.log_curve(f"foarl_reward_{prob}_seed{seed}", [r["reward"] for r in rows])
                ctx.run.log_curve(f"foarl_feasible_{prob}_seed{seed}", [r["feasible"] for r in rows])
        write_json(ctx.path(TRAIN_METRICS), {
            "seeds": seeds,
            "cpu_s": {k: round(sum(m["cpu_s"][k] for m in per_seed.values()), 2) for k in ("sft", "foarl", "sft_control")},
            "per_seed": {str(s): {k: v for k, v in m.items() if k != "sft_loss"} for s, m in per_seed.items()},
        })


if __name__ == "__main__":
    main()
