"""noisy_grpo evaluate, for every verdict seed: greedy accuracy of every policy in and out of
distribution (per instance, averaged over the RL replicates of a method), the paired (per-instance)
gains of NoisyGRPO and its ablations over GRPO, with t intervals, and the plot.

Outputs: reports/noisy_grpo/metrics.json (what claims.yaml checks: each seed's figures under
``per_seed``, their means beside), reports/noisy_grpo/accuracy.png and its table
reports/noisy_grpo/accuracy.csv (one row per method and split: the mean over the seeds).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATASET, METRICS, PLOT, PLOT_DATA, POLICIES


def main() -> None:
    with stage("noisy_grpo", "evaluate", PARAMS) as ctx:
        import io

        import numpy as np
        import torch

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics

        from .core import DATA_KEYS, SHOWN, evaluate_seed

        limit_threads(1)
        d = np.load(ctx.path(DATASET))
        states = torch.load(io.BytesIO(ctx.path(POLICIES).read_bytes()), weights_only=True)
        pp, p = ctx.params.prepare, ctx.params.train
        results = {}
        for seed in ctx.seeds:
            data = {k: d[f"s{seed}.{k}"] for k in DATA_KEYS}
            mine = {k.split("/", 1)[1]: v for k, v in states.items() if k.startswith(f"{seed}/")}
            results[seed] = evaluate_seed(mine, data, pp, p, ctx.params.evaluate.level)
            r = results[seed]
            print(f"  seed {seed}: " + "  ".join(f"{m}: id {r[f'{m}_id_acc']:.3f} ood {r[f'{m}_ood_acc']:.3f}"
                                                 for m in SHOWN), flush=True)
        metrics = per_seed_metrics(results, n_test=int(pp.n_test), replicates=int(p.replicates))
        write_json(ctx.path(METRICS), metrics)
        acc = {k: metrics[k] for k in metrics if k.endswith("_acc")}
        rows = [{"method": m, "split": s, "accuracy": acc[f"{m}_{s}_acc"]} for m in SHOWN for s in ("id", "ood")]
        write_csv(ctx.path(PLOT_DATA), rows)
        fig, ax = new_figure(figsize=(6, 3.5))
        x = np.arange(2)
        for i, m in enumerate(SHOWN):
            ys = [acc[f"{m}_{s}_acc"] for s in ("id", "ood")]
            ax.bar(x + (i - 2) * 0.16, ys, 0.16, label=m)
            for j, s in enumerate(("id", "ood")):        # each seed's accuracy as a dot
                ax.plot([x[j] + (i - 2) * 0.16] * len(ctx.seeds),
                        [results[seed][f"{m}_{s}_acc"] for seed in ctx.seeds], "k.", ms=3)
        ax.set(xticks=x, xticklabels=["in distribution", "out of distribution"], ylabel="greedy answer accuracy",
               ylim=(0, 1), title=f"noisy_grpo: accuracy by method (mean and each of {len(ctx.seeds)} seeds)")
        ax.legend(fontsize=7, ncol=3)
        save_png(fig, ctx.path(PLOT))


if __name__ == "__main__":
    main()
