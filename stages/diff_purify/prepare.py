"""diff_purify prepare: scikit-learn's 8x8 digits (shipped with the package, nothing downloaded),
pixels scaled to [0, 1], split stratified by each verdict seed (``ctx.seeds``): every seed is an
independent repetition of the experiment with its own training and test digits.

Outputs: data/diff_purify/digits.npz (``x_train_<seed>``, ``y_train_<seed>``, ``x_test_<seed>``,
``y_test_<seed>`` for every seed) and reports/diff_purify/prepare.json (sizes, per seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DIGITS, PREPARE_METRICS


def main() -> None:
    with stage("diff_purify", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz
        from stages.common.seeds import per_seed_metrics

        from .data import seed_split, split_arrays

        arrays = split_arrays(ctx.params.prepare.test_fraction, ctx.seeds)
        write_npz(ctx.path(DIGITS), arrays)
        sizes = {}
        for seed in ctx.seeds:
            xtr, _, _, yte = seed_split(arrays, seed)
            sizes[seed] = {"n_train": int(len(xtr)), "n_test": int(len(yte)), "pixels": int(xtr.shape[1]),
                           "test_class_counts": np.bincount(yte, minlength=10).tolist()}
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(sizes))
        print(f"  {len(ctx.seeds)} splits (seeds {ctx.seeds}): {sizes[ctx.seeds[0]]['n_train']} training, "
              f"{sizes[ctx.seeds[0]]['n_test']} test digits each", flush=True)


if __name__ == "__main__":
    main()
