"""The data profile and the study's measures: latent overlap (the Fréchet distance, diversity and
coverage are stages.common.samples).

Latent overlap (tail-head) is a k-nearest-neighbour measure on a class-balanced reference set:
for every tail-class point, the fraction of its k nearest neighbours (Euclidean, itself excluded)
that carry a head-class label; the overlap is the mean over tail points. With equal counts per
class, a representation that carries no class information gives about ``n_head / (n_classes - 1)``
(chance), a perfectly separated one gives 0. It reads the paper's claim directly (tail latents
that sit among head latents = feature borrowing), needs no density model in a 32-dimensional space
with a few hundred points (a Bhattacharyya overlap would need per-class covariances from 30 points),
and is invariant to a common rescaling of the features.
"""
from __future__ import annotations

import numpy as np


def long_tail_counts(n_max: int, ratio: float, n_classes: int = 10) -> list[int]:
    """Exponential profile n_c = round(n_max * ratio^(-c / (n_classes - 1))), c = 0..n_classes-1:
    class 0 has n_max, the last n_max / ratio."""
    if n_max < 1 or ratio < 1 or n_classes < 2:
        raise ValueError(f"long_tail_counts: need n_max >= 1, ratio >= 1, n_classes >= 2; got {n_max}, {ratio}, "
                         f"{n_classes}")
    return [max(1, int(round(n_max * ratio ** (-c / (n_classes - 1))))) for c in range(n_classes)]


def knn_overlap(feats: np.ndarray, labels: np.ndarray, tail: list[int], head: list[int], k: int) -> float:
    """Mean over points of the ``tail`` classes of the fraction of their ``k`` nearest neighbours
    (Euclidean, the point itself excluded, ties broken by index) whose label is in ``head``."""
    feats = np.asarray(feats, dtype=np.float64)
    labels = np.asarray(labels)
    if feats.ndim != 2 or len(feats) != len(labels):
        raise ValueError(f"knn_overlap: feats must be (n, d) with n = len(labels); got {feats.shape}, {labels.shape}")
    if not 1 <= k < len(feats):
        raise ValueError(f"knn_overlap: k must be in 1..n-1 = {len(feats) - 1}, got {k}")
    if set(tail) & set(head):
        raise ValueError(f"knn_overlap: tail {tail} and head {head} share classes")
    is_tail = np.isin(labels, tail)
    if not is_tail.any():
        raise ValueError(f"knn_overlap: no point has a tail label {tail}")
    sq = (feats ** 2).sum(1)
    d = sq[is_tail, None] + sq[None, :] - 2 * feats[is_tail] @ feats.T
    d[np.arange(is_tail.sum()), np.flatnonzero(is_tail)] = np.inf      # not its own neighbour
    nn = np.argsort(d, axis=1, kind="stable")[:, :k]
    return float(np.isin(labels[nn], head).mean())


def bhattacharyya_1d(m1: float, v1: float, m2: float, v2: float) -> float:
    """Bhattacharyya coefficient of N(m1, v1) and N(m2, v2): exp(-D_B) with
    D_B = (m1 - m2)^2 / (4 (v1 + v2)) + ln((v1 + v2) / (2 sqrt(v1 v2))) / 2; 1 for equal Gaussians."""
    if v1 <= 0 or v2 <= 0:
        raise ValueError(f"bhattacharyya_1d: variances must be > 0, got {v1}, {v2}")
    db = (m1 - m2) ** 2 / (4 * (v1 + v2)) + 0.5 * np.log((v1 + v2) / (2 * np.sqrt(v1 * v2)))
    return float(np.exp(-db))


def pair_overlap(feats: np.ndarray, labels: np.ndarray, tail: list[int], head: list[int]) -> float:
    """Mean over (tail class, head class) pairs of the Bhattacharyya coefficient of the two classes'
    points projected on the line through their means (1-D Gaussians fitted to the projections):
    1 = indistinguishable along that line, 0 = disjoint."""
    feats = np.asarray(feats, dtype=np.float64)
    labels = np.asarray(labels)
    out = []
    for a in tail:
        for b in head:
            xa, xb = feats[labels == a], feats[labels == b]
            if len(xa) < 2 or len(xb) < 2:
                raise ValueError(f"pair_overlap: classes {a} and {b} need >= 2 points each, got {len(xa)}, {len(xb)}")
            u = xa.mean(0) - xb.mean(0)
            norm = np.linalg.norm(u)
            if norm == 0:
                out.append(1.0)
                continue
            pa, pb = xa @ (u / norm), xb @ (u / norm)
            out.append(bhattacharyya_1d(pa.mean(), pa.var(ddof=1) + 1e-12, pb.mean(), pb.var(ddof=1) + 1e-12))
    return float(np.mean(out))
