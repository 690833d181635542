"""t2mir evaluate: the figures the claims read, and the plots.

Outputs: reports/t2mir/metrics.json (what claims.yaml checks), reports/t2mir/test_mse.png
and its data reports/t2mir/test_mse.csv.
"""
from __future__ import annotations

from stages.common.stage import fail, stage

from .params import PARAMS
from .paths import DATASET, FITS, METRICS, PLOT, PLOT_DATA


def main() -> None:
    with stage("t2mir", "evaluate", PARAMS) as ctx:
        import numpy as np
        from datasets import load_from_disk

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        for rel, step in ((DATASET, "prepare"), (FITS, "train")):
            if not ctx.path(rel).exists():
                fail(f"{rel} is missing; run `dvc repro stages/t2mir/dvc.yaml:t2mir-{step}` first")
        test = load_from_disk(str(ctx.path(DATASET)))["test"].with_format("numpy")[:]     # all rows
        fits = np.load(ctx.path(FITS))
        lams, weights = fits["lambdas"].tolist(), fits["weights"]
        mse = [float(np.mean((test["x"] @ w - test["y"]) ** 2)) for w in weights]
        best = int(np.argmin(mse))
        base = mse[lams.index(ctx.params.evaluate.baseline_lambda)]
        write_json(ctx.path(METRICS), {"test_mse": dict(zip(map(str, lams), mse)),
                                       "best_lambda": lams[best], "best_test_mse": mse[best],
                                       "baseline_test_mse": base, "gain_over_baseline": base - mse[best]})
        write_csv(ctx.path(PLOT_DATA), [{"lambda": lam, "test_mse": m} for lam, m in zip(lams, mse)])
        fig, ax = new_figure(figsize=(5, 3.5))
        ax.plot([max(lam, 1e-3) for lam in lams], mse, "o-")
        ax.set(xscale="log", xlabel="ridge penalty (0 drawn at 1e-3)", ylabel="test MSE", title="t2mir")
        save_png(fig, ctx.path(PLOT))
        print(f"  best lambda {lams[best]}: test MSE {mse[best]:.4g} (baseline {base:.4g})", flush=True)


if __name__ == "__main__":
    main()
