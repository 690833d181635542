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
