"""Distances between a particle belief and exact samples of the true belief.

* ``mmd``: the (biased, V-statistic) maximum mean discrepancy with an RBF kernel
  k(x, y) = exp(-|x - y|^2 / (2 s^2)) and particle weights a (sum 1) vs exact samples
  (uniform weights b): MMD^2 = a'Kxx a + b'Kyy b - 2 a'Kxy b, returned as sqrt(max(MMD^2, 0)),
  one value per bandwidth s. The bandwidths are ``scales`` times the median pairwise distance of
  the exact samples (written here: no installed library computes an MMD).
* ``sliced_w``: POT's ``ot.sliced_wasserstein_distance`` (p = 2, seeded projections).
* ``ratio_interval``: the ratio of two methods' mean distances over one seed's replications, with
  the shared BCa bootstrap (``stages.common.inference.bootstrap_interval``, paired).
"""
from __future__ import annotations

import numpy as np


def _sq(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    D = (X * X).sum(1)[:, None] + (Y * Y).sum(1)[None, :] - 2.0 * X @ Y.T
    return np.maximum(D, 0.0)


def median_distance(Y: np.ndarray, max_points: int = 1000) -> float:
    """Median pairwise (off-diagonal) distance of the first ``max_points`` rows of Y."""
    Y = Y[:max_points]
    D = _sq(Y, Y)
    iu = np.triu_indices(len(Y), 1)
    return float(np.sqrt(np.median(D[iu])))


def mmd_self_term(Y: np.ndarray, sigmas) -> np.ndarray:
    """b' K_yy b (uniform b) for every bandwidth: the part of MMD^2 that depends on Y only."""
    Dyy = _sq(Y, Y)
    return np.array([np.exp(-Dyy / (2.0 * float(s) ** 2)).mean() for s in np.atleast_1d(sigmas)])


def mmd(X: np.ndarray, Y: np.ndarray, sigmas, a: np.ndarray | None = None, yy: np.ndarray | None = None) -> np.ndarray:
    """MMD between weighted points X (weights a, default uniform) and Y, one per bandwidth;
    ``yy`` = mmd_self_term(Y, sigmas) when already computed."""
    if X.ndim != 2 or Y.ndim != 2 or X.shape[1] != Y.shape[1]:
        raise ValueError(f"mmd: X and Y must be (n, d) and (m, d) with the same d, got {X.shape}, {Y.shape}")
    sigmas = np.atleast_1d(np.asarray(sigmas, float))
    if (sigmas <= 0).any():
        raise ValueError(f"mmd: bandwidths must be > 0, got {sigmas.tolist()}")
    a = np.full(len(X), 1.0 / len(X)) if a is None else np.asarray(a, float) / np.sum(a)
    yy = mmd_self_term(Y, sigmas) if yy is None else yy
    Dxx, Dxy = _sq(X, X), _sq(X, Y)
    out = []
    for s, kyy in zip(sigmas, yy):
        g = -1.0 / (2.0 * float(s) ** 2)
        v = a @ np.exp(g * Dxx) @ a + kyy - 2.0 * (a @ np.exp(g * Dxy)).mean()
        out.append(np.sqrt(max(v, 0.0)))
    return np.array(out)


def sliced_w(X: np.ndarray, Y: np.ndarray, n_projections: int, seed: int, a: np.ndarray | None = None) -> float:
    """Sliced 2-Wasserstein distance (POT), weights a on X, uniform on Y."""
    import ot

    a = np.full(len(X), 1.0 / len(X)) if a is None else np.asarray(a, float) / np.sum(a)
    b = np.full(len(Y), 1.0 / len(Y))
    return float(ot.sliced_wasserstein_distance(X, Y, a, b, n_projections=n_projections, p=2, seed=seed))


def ratio_of_means(num: np.ndarray, den: np.ndarray, axis: int = -1) -> np.ndarray:
    """mean(num) / mean(den) along ``axis`` (vectorised, as scipy.stats.bootstrap calls it)."""
    return np.mean(num, axis=axis) / np.mean(den, axis=axis)


def ratio_interval(num, den, level: float, n_resamples: int, seed: int) -> dict:
    """mean(num) / mean(den) over paired replications (num[i] and den[i] scored on the same
    problem) with its BCa bootstrap interval at ``level`` (``stages.common.inference.
    bootstrap_interval``, ``paired=True``: the replications are resampled jointly for both).

    Returns ``ratio``, ``low``, ``high``, ``n`` (replications) and ``n_boot``."""
    from stages.common.inference import bootstrap_interval

    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    if num.ndim != 1 or num.shape != den.shape or len(num) < 2:
        raise ValueError(f"ratio_interval: num and den must be 1-D, of one length >= 2, got {num.shape}, {den.shape}")
    if (den <= 0).any() or (num < 0).any():
        raise ValueError("ratio_interval: distances must be >= 0 and the denominator's > 0")
    if not 0 < level < 1 or n_resamples < 1:
        raise ValueError(f"ratio_interval: need 0 < level < 1 and n_resamples >= 1, got {level}, {n_resamples}")
    lo, hi = bootstrap_interval((num, den), ratio_of_means, confidence=level, paired=True,
                                n_resamples=n_resamples, seed=seed)
    return {"ratio": float(ratio_of_means(num, den)), "low": lo, "high": hi, "n": int(len(num)),
            "n_boot": int(n_resamples)}
