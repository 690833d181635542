"""Log-log slopes of an error sweep with a bootstrap interval over the repetitions.

An error array ``err[game, n, rep]`` is summarised per game by the mean over repetitions at each
``n``; the study's curve is the geometric mean of those over games, so its OLS slope in
``(log n, log error)`` is the average of the per-game slopes. The interval resamples the
repetitions with replacement (independently per game and ``n``, as they were drawn) and refits.
"""
from __future__ import annotations

import numpy as np


def ols_slope(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares slopes of ``y[..., k]`` on ``x[k]`` (last axis), vectorised."""
    xc = x - x.mean()
    return ((y - y.mean(axis=-1, keepdims=True)) * xc).sum(axis=-1) / (xc ** 2).sum()


def curve(err: np.ndarray) -> np.ndarray:
    """``log`` of the geometric mean over games of the repetition means: ``[n]``."""
    return np.log(err.mean(axis=-1)).mean(axis=0)


def loglog_fit(n: np.ndarray, err: np.ndarray, n_boot: int, level: float,
               rng: np.random.Generator) -> dict:
    """Slope, intercept, per-game slopes and a percentile-bootstrap interval of the slope."""
    x = np.log(np.asarray(n, dtype=float))
    y = curve(err)
    slope = float(ols_slope(x, y))
    intercept = float(y.mean() - slope * x.mean())
    G, N, R = err.shape
    slopes = []
    for start in range(0, n_boot, 256):                            # chunks keep memory small
        idx = rng.integers(0, R, size=(min(256, n_boot - start), G, N, R))
        boot = np.take_along_axis(err[None], idx, axis=-1)        # (chunk, G, N, R)
        slopes.append(ols_slope(x, np.log(boot.mean(axis=-1)).mean(axis=1)))
    slopes = np.concatenate(slopes)
    lo, hi = np.quantile(slopes, [(1 - level) / 2, (1 + level) / 2])
    per_game = ols_slope(x, np.log(err.mean(axis=-1)))
    return {"slope": slope, "intercept": intercept, "ci_low": float(lo), "ci_high": float(hi),
            "per_game_min": float(per_game.min()), "per_game_max": float(per_game.max()),
            "first": float(np.exp(y[0])), "last": float(np.exp(y[-1]))}
