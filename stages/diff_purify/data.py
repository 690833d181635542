"""The digits: scikit-learn's 8x8 digits (shipped, offline), pixels / 16 in [0, 1]."""
from __future__ import annotations


def load_digits_split(test_fraction: float, seed: int):
    """(x_train, y_train, x_test, y_test): float32 pixels in [0, 1], int64 labels, a split
    stratified by class and drawn from ``seed``."""
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    if not 0 < test_fraction < 1:
        raise ValueError(f"load_digits_split: test_fraction must be in (0, 1), got {test_fraction}")
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=test_fraction, random_state=seed, stratify=y)
    return xtr, ytr, xte, yte


def split_arrays(test_fraction: float, seeds) -> dict:
    """Every seed's split as the arrays of digits.npz: ``x_train_<seed>``, ``y_train_<seed>``,
    ``x_test_<seed>``, ``y_test_<seed>``."""
    out = {}
    for seed in seeds:
        for name, arr in zip(("x_train", "y_train", "x_test", "y_test"), load_digits_split(test_fraction, seed)):
            out[f"{name}_{seed}"] = arr
    return out


def seed_split(arrays, seed: int):
    """(x_train, y_train, x_test, y_test) of ``seed`` from digits.npz's arrays; a KeyError naming
    the seeds the file holds when ``seed`` is not among them."""
    key = f"x_train_{seed}"
    if key not in arrays:
        held = sorted(int(k.rsplit("_", 1)[1]) for k in arrays if k.startswith("x_train_"))
        raise KeyError(f"digits.npz holds no split of seed {seed} (it has {held}): run the prepare stage "
                       f"for this profile")
    return tuple(arrays[f"{name}_{seed}"] for name in ("x_train", "y_train", "x_test", "y_test"))
