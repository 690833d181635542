"""bitmark prepare: scikit-learn's 8x8 digits (shipped with the package, no download), pixel values
quantised to 4 bits (0..15), split into train and test (stratified, seeded).

The digits are read from the file ``load_digits`` reads (``sklearn/datasets/data/digits.csv.gz``)
without importing scikit-learn (importing ``sklearn.datasets`` costs ~1.2 s of CPU, most of the
stage); a test checks the arrays equal ``load_digits()``'s.

Outputs: data/bitmark/digits.npz (``train_pixels``, ``train_labels``, ``test_pixels``,
``test_labels``; pixels as levels 0..15, 64 a row) and reports/bitmark/prepare.json (sizes).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DIGITS, PREPARE_METRICS


def shipped_digits():
    """(pixels (1797, 64) floats 0..16, labels (1797,) ints): scikit-learn's digits file."""
    import importlib.util
    from pathlib import Path

    import numpy as np

    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("bitmark: scikit-learn is not installed; its digits file is the data")
    path = Path(list(spec.submodule_search_locations)[0]) / "datasets" / "data" / "digits.csv.gz"
    a = np.loadtxt(path, delimiter=",")
    return a[:, :-1], a[:, -1].astype(np.int64)


def stratified_split(labels, test_fraction: float, rng):
    """(train indices, test indices): in each class a random ``test_fraction`` (rounded) is held out."""
    import numpy as np

    labels = np.asarray(labels)
    train, test = [], []
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        k = int(round(test_fraction * len(idx)))
        test.append(idx[:k])
        train.append(idx[k:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


def main() -> None:
    with stage("bitmark", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz

        from .wm import N_BITS, encode, quantise

        p = ctx.params.prepare
        x, y = shipped_digits()
        q = quantise(x)
        tr, te = stratified_split(y, p.test_fraction, np.random.default_rng([ctx.seed, 0]))
        write_npz(ctx.path(DIGITS), {"train_pixels": q[tr].astype(np.int8), "train_labels": y[tr].astype(np.int8),
                                     "test_pixels": q[te].astype(np.int8), "test_labels": y[te].astype(np.int8)})
        write_json(ctx.path(PREPARE_METRICS), {
            "n_train": int(len(tr)), "n_test": int(len(te)), "bits_per_image": N_BITS,
            "share_of_zero_pixels": float(np.mean(q == 0)), "share_of_one_bits": float(encode(q).mean())})
        print(f"  digits: {len(tr)} train, {len(te)} test; {N_BITS} bits an image", flush=True)


if __name__ == "__main__":
    main()
