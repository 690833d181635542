"""Scores and bootstrap intervals.

``bootstrap`` is scipy's BCa bootstrap (``scipy.stats.bootstrap`` through
:func:`stages.common.inference.bootstrap_interval`) of a statistic of one or more aligned arrays:
the items are resampled together (``paired``), so a difference between two models on the same
questions is a paired bootstrap. The statistics below are vectorised: they take arrays and an
``axis`` keyword, as scipy wants. benchmarks/fgbench/bootstrap.py prints it beside scipy's
percentile interval.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np


def accuracy(pred: Sequence[str], truth: Sequence[str]) -> float:
    pred, truth = list(pred), list(truth)
    if len(pred) != len(truth) or not pred:
        raise ValueError(f"accuracy needs two equal, non-empty lists (got {len(pred)} and {len(truth)})")
    return float(np.mean([_norm(p) == _norm(t) for p, t in zip(pred, truth)]))


def _norm(s) -> str:
    return str(s).strip().lower()


def mae(pred, truth) -> float:
    e = _errors(pred, truth)
    return float(np.mean(np.abs(e)))


def rmse(pred, truth) -> float:
    e = _errors(pred, truth)
    return float(np.sqrt(np.mean(e ** 2)))


def _errors(pred, truth) -> np.ndarray:
    p, t = np.asarray(pred, dtype=float), np.asarray(truth, dtype=float)
    if p.shape != t.shape or p.size == 0:
        raise ValueError(f"errors need two equal, non-empty arrays (got {p.shape} and {t.shape})")
    return p - t


def bootstrap(arrays: Sequence[np.ndarray], statistic: Callable[..., np.ndarray], n_boot: int,
              level: float, seed: int, method: str = "BCa") -> tuple[float, float]:
    """BCa interval (or scipy's other ``method``) at ``level`` of ``statistic`` over ``n_boot``
    paired resamples of the items of ``arrays``; zero spread gives (value, value).

    ``statistic(*arrays, axis=-1)`` reduces the items' axis (the ``*_stat`` functions below)."""
    from stages.common.inference import bootstrap_interval

    arrays = [np.asarray(a, dtype=float) for a in arrays]
    n = len(arrays[0])
    if n == 0 or any(len(a) != n for a in arrays):
        raise ValueError("bootstrap needs non-empty arrays of one length")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    return bootstrap_interval(tuple(arrays), statistic, confidence=level, method=method, paired=True,
                              n_resamples=n_boot, seed=seed)


def mean_stat(x, axis=-1):
    return x.mean(axis=axis)


def rmse_stat(x, axis=-1):
    return np.sqrt((x ** 2).mean(axis=axis))


def diff_abs_stat(a, b, axis=-1):
    """MAE(a) - MAE(b) for error arrays a, b (paired)."""
    return np.abs(a).mean(axis=axis) - np.abs(b).mean(axis=axis)


def score_bool(pred: Sequence[str], truth: Sequence[str], n_boot: int, level: float, seed: int) -> dict:
    hits = np.asarray([_norm(p) == _norm(t) for p, t in zip(pred, truth)], dtype=float)
    lo, hi = bootstrap([hits], mean_stat, n_boot, level, seed)
    return {"n": int(len(hits)), "accuracy": float(hits.mean()), "ci_low": lo, "ci_high": hi}


def score_value(pred, truth, n_boot: int, level: float, seed: int) -> dict:
    e = _errors(pred, truth)
    mlo, mhi = bootstrap([np.abs(e)], mean_stat, n_boot, level, seed)
    rlo, rhi = bootstrap([e], rmse_stat, n_boot, level, seed + 1)
    return {"n": int(len(e)), "mae": float(np.mean(np.abs(e))), "mae_ci_low": mlo, "mae_ci_high": mhi,
            "rmse": float(np.sqrt(np.mean(e ** 2))), "rmse_ci_low": rlo, "rmse_ci_high": rhi}
