"""Tail statistics: Clopper-Pearson intervals for event rates and the two tail fits.

* ``clopper_pearson``: exact binomial interval, vectorized over arrays of counts (scipy's
  ``binomtest(k, n).proportion_ci(method="exact")`` answers one count at a time; the test
  suite checks both agree, benchmarks/ensemble_tail_vectorized.py measures the speed ratio).
* ``fit_line``: least squares of log p on x (x = n: log-linear, exponential tail; x = log n:
  log-log, polynomial tail), with R^2.
* ``bootstrap_slopes``: the fit's slope over binomial resamples of the counts (replications
  are independent across n, so resampling replications = redrawing each count).
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


def bootstrap_slopes(rng: np.random.Generator, x, counts, R: int, n_boot: int) -> np.ndarray:
    """Slopes of log(rate) ~ x over ``n_boot`` binomial redraws of the counts (a zero redraw
    counts as half an event so the log exists), shape (n_boot,)."""
    x = np.asarray(x, float)
    p = np.asarray(counts, float) / R
    draws = rng.binomial(R, p, size=(n_boot, p.size)).astype(float)
    logp = np.log(np.maximum(draws, 0.5) / R)
    xc = x - x.mean()
    return (logp - logp.mean(axis=1, keepdims=True)) @ xc / (xc @ xc)


def percentile_ci(draws: np.ndarray, level: float) -> tuple[float, float]:
    a = (1 - level) / 2
    return float(np.quantile(draws, a)), float(np.quantile(draws, 1 - a))
