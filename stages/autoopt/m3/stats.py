"""The paired comparison of two methods' success on the same problems, with a bootstrap interval.

``paired_bootstrap`` takes one difference per problem (method A's success rate over its runs
minus method B's, the runs being paired by seed) and resamples *problems* with replacement,
within each stratum (the problem classes: the set's class sizes are fixed by design, so every
resample keeps them), ``n_boot`` times; the interval is scipy's BCa interval of the mean
difference (``scipy.stats.bootstrap`` through :func:`stages.common.inference.bootstrap_interval`,
each stratum one independently resampled sample; Efron & Tibshirani, "An Introduction to the
Bootstrap", 1993, ch. 14). Runs stay with their problem: the unit that varies between benchmark
sets is the problem, not the seed. ``sign_counts`` says on how many problems A was better, worse,
or tied.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


def paired_bootstrap(diff: Sequence[float], strata: Sequence[str] | None, *, n_boot: int, level: float,
                     seed: int, method: str = "BCa") -> dict:
    """Mean of ``diff`` and its stratified BCa bootstrap interval (or scipy's other ``method``) at
    ``level``: ``{"mean", "low", "high", "n", "n_boot", "level"}``. Zero spread gives low = high = mean."""
    from stages.common.inference import bootstrap_interval

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
    groups = [d[labels == s] for s in np.unique(labels)]
    # a one-problem stratum resamples to itself (and scipy wants two or more observations a sample)
    fixed = float(sum(g.sum() for g in groups if g.size == 1))
    varying = tuple(g for g in groups if g.size > 1)

    def mean_diff(*samples, axis=-1):
        return (fixed + sum(s.sum(axis=axis) for s in samples)) / d.size

    if varying:
        lo, hi = bootstrap_interval(varying, mean_diff, confidence=level, method=method, n_resamples=n_boot,
                                    seed=seed)
    else:
        lo = hi = float(d.mean())
    return {"mean": float(d.mean()), "low": float(lo), "high": float(hi), "n": int(d.size),
            "n_boot": int(n_boot), "level": float(level)}


def sign_counts(diff: Sequence[float]) -> dict:
    """Problems where the difference is > 0 (A better), < 0 (B better), = 0 (tie)."""
    d = np.asarray(diff, dtype=float)
    return {"better": int((d > 0).sum()), "worse": int((d < 0).sum()), "tied": int((d == 0).sum())}
