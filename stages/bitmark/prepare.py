"""bitmark prepare: scikit-learn's 8x8 digits (shipped with the package, no download), pixel values
quantised to 4 bits (0..15), split into train and test (stratified, seeded).

Outputs: data/bitmark/digits.npz (``train_pixels``, ``train_labels``, ``test_pixels``,
``test_labels``; pixels as levels 0..15, 64 a row) and reports/bitmark/prepare.json (sizes).
"""
from __future__ import annotations

from stages.common.stage import stage

from .params import PARAMS
from .paths import DIGITS, PREPARE_METRICS


def main() -> None:
    with stage("bitmark", "prepare", PARAMS) as ctx:
        import numpy as np
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split

        from stages.common.io import write_json, write_npz

        from .wm import N_BITS, quantise

        p = ctx.params.prepare
        d = load_digits()
        q = quantise(d.data)
        xtr, xte, ytr, yte = train_test_split(q, d.target, test_size=p.test_fraction, random_state=ctx.seed,
                                              stratify=d.target)
        write_npz(ctx.path(DIGITS), {"train_pixels": xtr.astype(np.int8), "train_labels": ytr.astype(np.int8),
                                     "test_pixels": xte.astype(np.int8), "test_labels": yte.astype(np.int8)})
        write_json(ctx.path(PREPARE_METRICS), {
            "n_train": int(len(xtr)), "n_test": int(len(xte)), "bits_per_image": N_BITS,
            "share_of_zero_pixels": float(np.mean(q == 0)), "share_of_one_bits": float(np.mean(
                np.unpackbits(q.astype(np.uint8)[..., None], axis=-1)[..., 4:]))})
        print(f"  digits: {len(xtr)} train, {len(xte)} test; {N_BITS} bits an image", flush=True)


if __name__ == "__main__":
    main()
