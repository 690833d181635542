"""autosep prepare: the digits and their splits (pre-training share; per group and repeat, the
unlabelled and the test images).

Outputs: data/autosep/dataset.npz (``x``, ``y``, ``pretrain``, ``unlabelled``, ``test``) and
reports/autosep/prepare.json (sizes).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATASET, PREPARE_METRICS


def main() -> None:
    with stage("autosep", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz

        from .data import load, split

        p = ctx.params.prepare
        x, y = load()
        s = split(y, ctx.seed, p.pretrain_frac, p.n_unlabelled, p.repeats)
        write_npz(ctx.path(DATASET), {"x": x, "y": y, **s})
        n_test = s["test"].sum(-1)
        write_json(ctx.path(PREPARE_METRICS), {
            "images": int(len(y)), "pretrain": int(len(s["pretrain"])), "repeats": p.repeats,
            "unlabelled_per_group": int(s["unlabelled"].shape[-1]), "test_per_group_mean": float(np.mean(n_test))})
        print(f"  {len(y)} digits: {len(s['pretrain'])} for pre-training; per group {s['unlabelled'].shape[-1]} "
              f"unlabelled, {np.mean(n_test):.0f} test; {p.repeats} repeats", flush=True)


if __name__ == "__main__":
    main()
