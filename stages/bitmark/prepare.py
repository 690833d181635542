"""bitmark prepare: scikit-learn's 8x8 digits (shipped with the package, no download), pixel values
quantised to 4 bits (0..15), and for every verdict seed (``ctx.seeds``) its own stratified
train/test split (a verdict seed repeats the whole experiment: split, models, samples).

The digits are read from the file ``load_digits`` reads (``sklearn/datasets/data/digits.csv.gz``)
without importing scikit-learn (importing ``sklearn.datasets`` costs ~1.2 s of CPU, most of the
stage); a test checks the arrays equal ``load_digits()``'s.

Outputs: data/bitmark/digits.npz (``pixels``, levels 0..15, 64 a row; ``labels``; ``test_idx_<seed>``
for each seed: its held-out digits, read back by ``data.seed_split``) and reports/bitmark/prepare.json
(sizes, per seed).
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
        from stages.common.seeds import per_seed_metrics, rng

        from .wm import N_BITS, encode, quantise

        p = ctx.params.prepare
        x, y = shipped_digits()
        q = quantise(x)
        arrays, sizes = {"pixels": q.astype(np.int8), "labels": y.astype(np.int8)}, {}
        for seed in ctx.seeds:
            tr, te = stratified_split(y, p.test_fraction, rng(seed, 0))
            arrays[f"test_idx_{seed}"] = te.astype(np.int16)
            sizes[seed] = {"n_train": int(len(tr)), "n_test": int(len(te)),
                           "test_share_of_one_bits": float(encode(q[te]).mean())}
        write_npz(ctx.path(DIGITS), arrays)
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(
            sizes, bits_per_image=N_BITS, share_of_zero_pixels=float(np.mean(q == 0)),
            share_of_one_bits=float(encode(q).mean())))
        first = sizes[ctx.seeds[0]]
        print(f"  digits: {first['n_train']} train, {first['n_test']} test for each of the seeds {ctx.seeds}; "
              f"{N_BITS} bits an image", flush=True)


if __name__ == "__main__":
    main()
