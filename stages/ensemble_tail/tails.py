"""Tail statistics: Clopper-Pearson intervals for event rates and the two tail fits.

* ``clopper_pearson``: exact binomial interval, vectorized over arrays of counts (scipy's
  ``binomtest(k, n).proportion_ci(method="exact")`` answers one count at a time; the test
  suite checks both agree, benchmarks/ensemble_tail/vectorized.py measures the speed ratio).
* ``fit_line``: least squares of log p on x (x = n: log-linear, exponential tail; x = log n:
  log-log, polynomial tail), with R^2.
* ``slope_interval`` / ``slope_ratio_interval``: scipy's BCa bootstrap interval
  (``scipy.stats.bootstrap`` through :func:`stages.common.inference.bootstrap_interval`) of a
  fit's slope, and of the ratio of two fits' slopes, refitted on every resample. The data are the
  replications, one 0/1 sample (event or not) per n, each resampled on its own (replications are
  independent across n, so this redraws each count from its binomial).
"""
from __future__ import annotations

import numpy as np


def clopper_pearson(k, n, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Clopper-Pearson) two-sided interval for k events out of n, elementwise."""
    from scipy.stats import beta

    k = np.asarray(k, float)
    n = np.asarray(n, float)
    alpha = 1.0 - level
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k > 0, beta.ppf(alpha / 2, k, n - k + 1), 0.0)
        hi = np.where(k < n, beta.ppf(1 - alpha / 2, k + 1, n - k), 1.0)
    return lo, hi


def fit_line(x, logp) -> dict:
    """slope, intercept and R^2 of the least-squares line logp ~ x."""
    x = np.asarray(x, float)
    y = np.asarray(logp, float)
    if x.size < 2 or not np.isfinite(y).all():
        return {"slope": float("nan"), "intercept": float("nan"), "r2": float("nan"), "points": int(x.size)}
    slope, icpt = np.polyfit(x, y, 1)
    res = y - (slope * x + icpt)
    ss = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float((res ** 2).sum()) / ss if ss > 0 else float("nan")
    return {"slope": float(slope), "intercept": float(icpt), "r2": r2, "points": int(x.size)}


# resamples (and BCa jackknife rows) in memory at once: without it the jackknife of a size's R
# replications is an R x R array (0.8 GB peak at R = 2000, about 15 GB at the paper's 20000)
BATCH = 256


def _replications(counts, R: int) -> tuple[np.ndarray, ...]:
    """One 0/1 sample per n: ``k`` events among the ``R`` replications."""
    return tuple(np.r_[np.ones(int(k)), np.zeros(R - int(k))] for k in counts)


def _slope_statistic(x):
    """Vectorised slope of log(rate) ~ x from one 0/1 sample per x (scipy's ``statistic``): a rate
    of 0 counts as half an event so the log exists."""
    x = np.asarray(x, float)
    xc = x - x.mean()

    def slope(*samples, axis=-1):
        logp = np.stack([np.log(np.maximum(s.mean(axis=axis), 0.5 / s.shape[axis])) for s in samples], axis=-1)
        return (logp - logp.mean(axis=-1, keepdims=True)) @ xc / (xc @ xc)
    return slope


def slope_interval(x, counts, R: int, *, n_boot: int, level: float, seed: int,
                   method: str = "BCa") -> tuple[float, float]:
    """BCa interval (or scipy's other ``method``) at ``level`` of the slope of log(rate) ~ x,
    ``n_boot`` resamples of the ``R`` replications behind each count."""
    from stages.common.inference import bootstrap_interval

    return bootstrap_interval(_replications(counts, R), _slope_statistic(x), confidence=level, method=method,
                              n_resamples=n_boot, seed=seed, batch=BATCH)


def slope_ratio_interval(x, counts, x_ref, counts_ref, R: int, *, n_boot: int, level: float,
                         seed: int, method: str = "BCa") -> tuple[float, float]:
    """BCa interval at ``level`` of slope(x, counts) / slope(x_ref, counts_ref), both refitted on
    every resample (the two sets of replications resampled independently)."""
    from stages.common.inference import bootstrap_interval

    num, den, k = _slope_statistic(x), _slope_statistic(x_ref), len(counts)

    def ratio(*samples, axis=-1):
        return num(*samples[:k], axis=axis) / den(*samples[k:], axis=axis)
    return bootstrap_interval(_replications(counts, R) + _replications(counts_ref, R), ratio, confidence=level,
                              method=method, n_resamples=n_boot, seed=seed, batch=BATCH)
