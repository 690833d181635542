"""noisy_grpo prepare: the synthetic images of every verdict seed, each generated from its seed.

Outputs: data/noisy_grpo/dataset.npz (per seed s, keys ``s<seed>.<name>``: train images with their
partly wrong SFT chains; the test images in distribution (``id_*``) and out of distribution
(``ood_*``)) and reports/noisy_grpo/prepare.json (sizes, SFT chain accuracy and the disjointness
check, per seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .params import PARAMS
from .paths import DATASET, PREPARE_METRICS


def main() -> None:
    with stage("noisy_grpo", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz
        from stages.common.seeds import per_seed_metrics

        from .core import make_dataset, true_chain

        p = ctx.params.prepare
        in_01 = lambda a: np.isin(a, (0.0, 1.0)).all(axis=(1, 2, 3))   # noqa: E731
        arrays, figures = {}, {}
        for seed in ctx.seeds:
            d = make_dataset(seed, p)
            if not in_01(d["img"]).all() or not in_01(d["id_img"]).all() or in_01(d["ood_img"]).any():
                fail(f"noisy_grpo prepare: seed {seed}'s OOD images are not disjoint from the training distribution")
            arrays.update({f"s{seed}.{k}": v for k, v in d.items()})
            sft_right = float((d["chain"] == true_chain(d["counts"], d["q"])).all(axis=1).mean())
            figures[seed] = {"sft_chains_right": sft_right, "ood_images_with_pixels_in_01": int(in_01(d["ood_img"]).sum())}
            print(f"  seed {seed}: {p.n_train} train, {p.n_test} + {p.n_test} test images; "
                  f"SFT chains right {sft_right:.2f}", flush=True)
        write_npz(ctx.path(DATASET), arrays)
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(figures, n_train=p.n_train, n_test=p.n_test))


if __name__ == "__main__":
    main()
