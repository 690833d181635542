"""Scores and percentile-bootstrap intervals (vectorised numpy).

``bootstrap`` resamples the items of one or more aligned arrays ``n_boot`` times (the same
resample for every array, so a difference between two models on the same questions is a
paired bootstrap) and returns the percentile interval of a statistic. Checked against
``scipy.stats.bootstrap(method='percentile')`` in the tests; benchmarks/fgbench_bootstrap.py
times both.
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
              level: float, seed: int, chunk: int = 500) -> tuple[float, float]:
    """Percentile interval of ``statistic`` over resamples of the items of ``arrays``.

    ``statistic(*resampled)`` gets arrays of shape (B, n) and returns B values."""
    arrays = [np.asarray(a, dtype=float) for a in arrays]
    n = len(arrays[0])
    if n == 0 or any(len(a) != n for a in arrays):
        raise ValueError("bootstrap needs non-empty arrays of one length")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    rng = np.random.default_rng(seed)
    stats = []
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        idx = rng.integers(0, n, size=(b, n))
        stats.append(np.asarray(statistic(*[a[idx] for a in arrays]), dtype=float))
    s = np.concatenate(stats)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(s, [alpha, 1 - alpha])
    return float(lo), float(hi)


def mean_stat(x):
    return x.mean(axis=-1)


def rmse_stat(x):
    return np.sqrt((x ** 2).mean(axis=-1))


def diff_abs_stat(a, b):
    """MAE(a) - MAE(b) for error arrays a, b (paired)."""
    return np.abs(a).mean(axis=-1) - np.abs(b).mean(axis=-1)


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
