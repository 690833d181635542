"""One verdict seed's digits: its own stratified train/test split of the 1797 quantised digits
(data/bitmark/digits.npz holds the digits once and each seed's test indices)."""
from __future__ import annotations

import numpy as np


def seed_split(d, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(train pixels, train labels, test pixels, test labels) of ``seed``: pixels as integer
    levels 0..15 (N, 64), labels 0..9. ``d`` is the loaded digits.npz (or a dict of its arrays)."""
    key = f"test_idx_{seed}"
    if key not in d:
        have = sorted(int(k.rsplit("_", 1)[1]) for k in d if k.startswith("test_idx_"))
        raise KeyError(f"bitmark: digits.npz has no split for seed {seed} (it holds seeds {have}); "
                       "run `dvc repro stages/bitmark/dvc.yaml:bitmark-prepare` for this profile")
    x, y = np.asarray(d["pixels"]).astype(np.int64), np.asarray(d["labels"]).astype(np.int64)
    test = np.zeros(len(y), bool)
    test[np.asarray(d[key])] = True
    return x[~test], y[~test], x[test], y[test]
