"""t2mir train: the method and its baseline on the training split.

The skeleton fits ridge regression in closed form for every penalty of ``train.lambdas``.
Outputs: data/t2mir/fits.npz (one weight vector per penalty) and reports/t2mir/train.json.
"""
from __future__ import annotations

from stages.common.stage import fail, stage

from .params import PARAMS
from .paths import DATASET, FITS, TRAIN_METRICS


def ridge(x, y, lam: float):
    """argmin_w ||x w - y||^2 / n + lam ||w||^2, in closed form."""
    import numpy as np

    n, d = x.shape
    return np.linalg.solve(x.T @ x / n + lam * np.eye(d), x.T @ y / n)


def main() -> None:
    with stage("t2mir", "train", PARAMS) as ctx:
        import numpy as np
        from datasets import load_from_disk

        from stages.common.io import write_json, write_npz

        if not ctx.path(DATASET).exists():
            fail(f"{DATASET} is missing; run `dvc repro stages/t2mir/dvc.yaml:t2mir-prepare` "
                 f"first")
        train = load_from_disk(str(ctx.path(DATASET)))["train"].with_format("numpy")[:]   # all rows
        x, y = train["x"], train["y"]
        lams = ctx.params.train.lambdas
        fits = np.stack([ridge(x, y, lam) for lam in lams])
        losses = [float(np.mean((x @ w - y) ** 2)) for w in fits]
        ctx.run.log_curve("train_mse_by_lambda", losses)
        write_npz(ctx.path(FITS), {"lambdas": np.array(lams), "weights": fits})
        write_json(ctx.path(TRAIN_METRICS), {"train_mse": dict(zip(map(str, lams), losses))})


if __name__ == "__main__":
    main()
