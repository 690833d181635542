"""diff_purify prepare: scikit-learn's 8x8 digits (shipped with the package, nothing downloaded),
pixels scaled to [0, 1], split stratified by the seed.

Outputs: data/diff_purify/digits.npz (x_train, y_train, x_test, y_test) and
reports/diff_purify/prepare.json (sizes).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DIGITS, PREPARE_METRICS


def main() -> None:
    with stage("diff_purify", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz

        from .data import load_digits_split

        xtr, ytr, xte, yte = load_digits_split(ctx.params.prepare.test_fraction, ctx.seed)
        write_npz(ctx.path(DIGITS), {"x_train": xtr, "y_train": ytr, "x_test": xte, "y_test": yte})
        write_json(ctx.path(PREPARE_METRICS), {
            "n_train": int(len(xtr)), "n_test": int(len(xte)), "pixels": int(xtr.shape[1]),
            "test_class_counts": np.bincount(yte, minlength=10).tolist()})


if __name__ == "__main__":
    main()
