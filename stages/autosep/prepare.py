"""autosep prepare: the digits and, for every verdict seed (``ctx.seeds``), its splits
(pre-training share; per group and repeat, the unlabelled and the test images).

Outputs: data/autosep/dataset.npz (``x``, ``y``, ``seeds``, and ``pretrain``, ``unlabelled``,
``test`` with a leading seed axis) and reports/autosep/prepare.json (sizes, the same for every seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATASET, PREPARE_METRICS


def main() -> None:
    with stage("autosep", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz

        from .data import load, split_seeds

        p = ctx.params.prepare
        x, y = load()
        s = split_seeds(y, ctx.seeds, p.pretrain_frac, p.n_unlabelled, p.repeats)
        write_npz(ctx.path(DATASET), {"x": x, "y": y, **s})
        n_test = s["test"].sum(-1)
        write_json(ctx.path(PREPARE_METRICS), {
            "images": int(len(y)), "pretrain": int(s["pretrain"].shape[-1]), "repeats": p.repeats,
            "seeds": [int(v) for v in s["seeds"]],
            "unlabelled_per_group": int(s["unlabelled"].shape[-1]), "test_per_group_mean": float(np.mean(n_test))})
        print(f"  {len(y)} digits, seeds {list(ctx.seeds)}: {s['pretrain'].shape[-1]} for pre-training; per group "
              f"{s['unlabelled'].shape[-1]} unlabelled, {np.mean(n_test):.0f} test; {p.repeats} repeats", flush=True)


if __name__ == "__main__":
    main()
