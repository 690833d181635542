"""The study's images: scikit-learn's 8x8 digits (shipped offline), split into the black box's
pre-training share and, for every fine-grained group and repeat, an unlabelled set and a test set."""
from __future__ import annotations

import numpy as np

from .sim import GROUPS


def load() -> tuple[np.ndarray, np.ndarray]:
    """The 1,797 digits as (n, 64) floats in [0, 1] and their labels."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.data / 16.0, d.target.astype(np.int64)


def split(y: np.ndarray, seed: int, pretrain_frac: float, n_unlabelled: int, repeats: int) -> dict:
    """Indices: ``pretrain`` (a share of every class, fixed by ``seed``), ``unlabelled`` (repeats,
    groups, 4 * n_unlabelled) and the boolean ``test`` mask (repeats, groups, n): in each repeat the
    rest of every class is shuffled again, its first ``n_unlabelled`` images are unlabelled, the others
    are the test images of every group the class belongs to."""
    rng = np.random.default_rng([seed, 0])
    pre, rest = [], {}
    for c in range(10):
        idx = rng.permutation(np.flatnonzero(y == c))
        k = int(round(pretrain_frac * len(idx)))
        if len(idx) - k <= n_unlabelled:
            raise ValueError(f"split: class {c} has {len(idx) - k} images after pre-training, not more than "
                             f"n_unlabelled = {n_unlabelled}")
        pre.append(idx[:k])
        rest[c] = idx[k:]
    unl = np.zeros((repeats, len(GROUPS), 4 * n_unlabelled), dtype=np.int64)
    test = np.zeros((repeats, len(GROUPS), len(y)), dtype=bool)
    for r in range(repeats):
        rr = np.random.default_rng([seed, 1, r])
        perm = {c: rr.permutation(idx) for c, idx in rest.items()}
        for g, classes in enumerate(GROUPS):
            unl[r, g] = np.concatenate([perm[c][:n_unlabelled] for c in classes])
            for c in classes:
                test[r, g, perm[c][n_unlabelled:]] = True
    return {"pretrain": np.sort(np.concatenate(pre)), "unlabelled": unl, "test": test}


def split_seeds(y: np.ndarray, seeds, pretrain_frac: float, n_unlabelled: int, repeats: int) -> dict:
    """Every verdict seed's split (``split``), stacked with a leading seed axis, and ``seeds``."""
    parts = [split(y, s, pretrain_frac, n_unlabelled, repeats) for s in seeds]
    return {"seeds": np.asarray(list(seeds), dtype=np.int64),
            **{k: np.stack([p[k] for p in parts]) for k in ("pretrain", "unlabelled", "test")}}


def seed_split(d, seed: int) -> dict:
    """One seed's split from a dataset file's arrays (``split_seeds``); a KeyError naming the seeds
    it holds when ``seed`` is not among them."""
    held = [int(s) for s in d["seeds"]]
    if seed not in held:
        raise KeyError(f"the dataset holds the seeds {held}, not {seed}: re-run the prepare stage")
    i = held.index(seed)
    return {k: d[k][i] for k in ("pretrain", "unlabelled", "test")}
