"""noisy_grpo prepare: the synthetic images, generated from the seed.

Outputs: data/noisy_grpo/dataset.npz (train images with their partly wrong SFT chains; the test
images in distribution (``id_*``) and out of distribution (``ood_*``)) and
reports/noisy_grpo/prepare.json (sizes, SFT chain accuracy, and the disjointness check).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .params import PARAMS
from .paths import DATASET, PREPARE_METRICS


def main() -> None:
    with stage("noisy_grpo", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz

        from .core import make_images, noisy_chains, true_chain

        p = ctx.params.prepare
        rng = np.random.default_rng([ctx.seed, 0])
        img, cnt, q = make_images(p.n_train, p.grid, p.max_per_colour, rng)
        chain = noisy_chains(cnt, q, p.p_wrong, p.max_per_colour, rng)
        ti, tc, tq = make_images(p.n_test, p.grid, p.max_per_colour, rng)
        oi, oc, oq = make_images(p.n_test, p.grid, p.max_per_colour, rng, ood=True,
                                 dim_range=tuple(p.ood_dim), pixel_noise=p.ood_pixel_noise)
        in_01 = lambda a: np.isin(a, (0.0, 1.0)).all(axis=(1, 2, 3))   # noqa: E731
        if not in_01(img).all() or not in_01(ti).all() or in_01(oi).any():
            fail("noisy_grpo prepare: the OOD images are not disjoint from the training distribution")
        write_npz(ctx.path(DATASET), {"img": img, "counts": cnt, "q": q, "chain": chain,
                                      "id_img": ti, "id_counts": tc, "id_q": tq,
                                      "ood_img": oi, "ood_counts": oc, "ood_q": oq})
        sft_right = float((chain == true_chain(cnt, q)).all(axis=1).mean())
        write_json(ctx.path(PREPARE_METRICS), {"n_train": p.n_train, "n_test": p.n_test,
                                               "sft_chains_right": sft_right,
                                               "ood_images_with_pixels_in_01": int(in_01(oi).sum())})
        print(f"  {p.n_train} train, {p.n_test} + {p.n_test} test images; SFT chains right {sft_right:.2f}", flush=True)


if __name__ == "__main__":
    main()
