"""bitmark's data: the shipped digits file read directly is scikit-learn's load_digits; the split
is stratified and seeded."""
from __future__ import annotations

import numpy as np

from stages.bitmark.prepare import shipped_digits, stratified_split


def test_shipped_digits_are_load_digits():
    from sklearn.datasets import load_digits

    x, y = shipped_digits()
    d = load_digits()
    assert np.array_equal(x, d.data) and np.array_equal(y, d.target)


def test_split_is_stratified_disjoint_and_seeded():
    y = np.repeat(np.arange(10), 50)
    tr, te = stratified_split(y, 0.2, np.random.default_rng(0))
    assert len(te) == 100 and len(tr) == 400 and not set(tr) & set(te)
    assert (np.bincount(y[te]) == 10).all()
    tr2, te2 = stratified_split(y, 0.2, np.random.default_rng(0))
    assert np.array_equal(te, te2) and not np.array_equal(te, stratified_split(y, 0.2, np.random.default_rng(1))[1])
