"""noisy_grpo evaluate: greedy accuracy of every policy in and out of distribution (per
instance, averaged over the RL replicates of a method), the paired (per-instance) gains of NoisyGRPO and its ablations over GRPO, with t intervals, and the plot.

Outputs: reports/noisy_grpo/metrics.json (what claims.yaml checks), reports/noisy_grpo/accuracy.png
and its table reports/noisy_grpo/accuracy.csv (one row per method and split).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATASET, METRICS, PLOT, PLOT_DATA, POLICIES

SHOWN = ("sft", "grpo", "noisy_grpo", "noise_only", "bayes_only")


def main() -> None:
    with stage("noisy_grpo", "evaluate", PARAMS) as ctx:
        import io

        import numpy as np
        import torch

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.stats import t_interval

        from .core import Policy, correct

        limit_threads(1)
        d = np.load(ctx.path(DATASET))
        states = torch.load(io.BytesIO(ctx.path(POLICIES).read_bytes()), weights_only=True)
        pp, p = ctx.params.prepare, ctx.params.train
        gen = torch.Generator().manual_seed(0)

        def load(state):
            pol = Policy(pp.grid, pp.max_per_colour + 1, d_model=p.d_model)
            pol.load_state_dict(state)
            return pol.eval()

        right = {}
        for m in SHOWN:
            keys = ["sft"] if m == "sft" else [f"{m}.{r}" for r in range(p.replicates)]
            for split in ("id", "ood"):
                right[m, split] = np.mean([correct(load(states[k]), torch.as_tensor(d[f"{split}_img"]),
                                                   torch.as_tensor(d[f"{split}_q"]),
                                                   torch.as_tensor(d[f"{split}_counts"]), gen) for k in keys], axis=0)
        lvl = ctx.params.evaluate.level
        acc = {f"{m}_{s}_acc": float(v.mean()) for (m, s), v in right.items()}
        gains = {}
        for m in ("noisy_grpo", "noise_only", "bayes_only"):
            for s in ("id", "ood"):
                gains[f"{m}_{s}_gain"] = t_interval(right[m, s] - right["grpo", s], lvl)
        gains["noisy_over_noise_only_ood"] = t_interval(right["noisy_grpo", "ood"] - right["noise_only", "ood"], lvl)
        metrics = {**acc, **{k: v["mean"] for k, v in gains.items()},
                   **{f"{k}_low": v["low"] for k, v in gains.items()},
                   "id_loss": -gains["noisy_grpo_id_gain"]["mean"], "n_test": int(pp.n_test)}
        write_json(ctx.path(METRICS), metrics)
        rows = [{"method": m, "split": s, "accuracy": acc[f"{m}_{s}_acc"]} for m in SHOWN for s in ("id", "ood")]
        write_csv(ctx.path(PLOT_DATA), rows)
        fig, ax = new_figure(figsize=(6, 3.5))
        x = np.arange(2)
        for i, m in enumerate(SHOWN):
            ys = [acc[f"{m}_{s}_acc"] for s in ("id", "ood")]
            err = [1.96 * np.sqrt(y * (1 - y) / pp.n_test) for y in ys]
            ax.bar(x + (i - 2) * 0.16, ys, 0.16, yerr=err, label=m, capsize=2)
        ax.set(xticks=x, xticklabels=["in distribution", "out of distribution"], ylabel="greedy answer accuracy",
               ylim=(0, 1), title="noisy_grpo: accuracy by method (95% binomial intervals)")
        ax.legend(fontsize=7, ncol=3)
        save_png(fig, ctx.path(PLOT))
        print("  " + "  ".join(f"{m}: id {acc[f'{m}_id_acc']:.3f} ood {acc[f'{m}_ood_acc']:.3f}" for m in SHOWN), flush=True)


if __name__ == "__main__":
    main()
