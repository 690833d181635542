"""The paired comparison of two methods' success on the same problems, with a bootstrap interval.

``paired_bootstrap`` takes one difference per problem (method A's success rate over its runs
minus method B's, the runs being paired by seed) and resamples *problems* with replacement,
within each stratum (the problem classes: the set's class sizes are fixed by design, so every
resample keeps them), ``n_boot`` times; the interval is the percentile interval of the mean
difference (Efron & Tibshirani, "An Introduction to the Bootstrap", 1993, ch. 13). Runs stay with
their problem: the unit that varies between benchmark sets is the problem, not the seed.
``sign_counts`` says on how many problems A was better, worse, or tied.

stages/common/stats.py has only a Student-t interval, and stages/fgbench/stats.py (another
study's, unstratified) is not importable from here; this module is the stratified version M3
needs.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


def paired_bootstrap(diff: Sequence[float], strata: Sequence[str] | None, *, n_boot: int, level: float,
                     seed: int) -> dict:
    """Mean of ``diff`` and its stratified percentile-bootstrap interval at ``level``:
    ``{"mean", "low", "high", "n", "n_boot", "level"}``."""
    d = np.asarray(diff, dtype=float)
    if d.ndim != 1 or d.size == 0 or not np.all(np.isfinite(d)):
        raise ValueError(f"paired_bootstrap needs a non-empty 1-D array of finite differences, got shape {d.shape}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    labels = np.zeros(d.size, dtype=int) if strata is None else np.unique(np.asarray(strata), return_inverse=True)[1]
    if labels.size != d.size:
        raise ValueError(f"strata has {labels.size} labels for {d.size} differences")
    rng = np.random.default_rng(seed)
    total = np.zeros(n_boot)
    for s in np.unique(labels):
        ds = d[labels == s]
        idx = rng.integers(0, ds.size, size=(n_boot, ds.size))
        total += ds[idx].sum(axis=1)
    stats = total / d.size
    alpha = (1 - level) / 2
    lo, hi = np.quantile(stats, [alpha, 1 - alpha])
    return {"mean": float(d.mean()), "low": float(lo), "high": float(hi), "n": int(d.size),
            "n_boot": int(n_boot), "level": float(level)}


def sign_counts(diff: Sequence[float]) -> dict:
    """Problems where the difference is > 0 (A better), < 0 (B better), = 0 (tie)."""
    d = np.asarray(diff, dtype=float)
    return {"better": int((d > 0).sum()), "worse": int((d < 0).sum()), "tied": int((d == 0).sum())}
