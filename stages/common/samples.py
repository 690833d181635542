"""Measures of generated samples, shared by the generative studies: a Fréchet distance between
Gaussians fitted to two feature sets (the FID formula, in whatever small feature space a study
chooses), diversity as the mean pairwise distance, and coverage (Naeem et al. 2020).

Each takes plain arrays (rows = samples) and returns a float; numpy and scipy only.
"""
from __future__ import annotations

import numpy as np


def frechet_distance(mu1, cov1, mu2, cov2) -> float:
    """Fréchet (2-Wasserstein) distance between N(mu1, cov1) and N(mu2, cov2):
    ``|mu1 - mu2|^2 + tr(C1) + tr(C2) - 2 tr((C1 C2)^(1/2))``, with scipy's ``sqrtm``. When the
    product is singular and sqrtm is not finite, both covariances get 1e-6 on the diagonal, as
    pytorch-fid does; the imaginary round-off of sqrtm is dropped."""
    from scipy import linalg

    mu1, mu2 = np.atleast_1d(np.asarray(mu1, np.float64)), np.atleast_1d(np.asarray(mu2, np.float64))
    cov1, cov2 = np.atleast_2d(np.asarray(cov1, np.float64)), np.atleast_2d(np.asarray(cov2, np.float64))
    if mu1.shape != mu2.shape or cov1.shape != cov2.shape or cov1.shape != (len(mu1), len(mu1)):
        raise ValueError(f"frechet_distance: shapes differ: mu {mu1.shape} {mu2.shape}, cov {cov1.shape} {cov2.shape}")
    covmean = linalg.sqrtm(cov1 @ cov2)
    if not np.isfinite(covmean).all():
        eps = 1e-6 * np.eye(len(mu1))
        covmean = linalg.sqrtm((cov1 + eps) @ (cov2 + eps))
    covmean = np.real(covmean)
    diff = mu1 - mu2
    return float(diff @ diff + np.trace(cov1) + np.trace(cov2) - 2 * np.trace(covmean))


def frechet_from_features(a, b) -> float:
    """Fréchet distance between the Gaussians (mean, sample covariance) fitted to the rows of
    ``a`` and of ``b``."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.ndim != 2 or b.ndim != 2 or len(a) < 2 or len(b) < 2:
        raise ValueError(f"frechet_from_features: needs two 2-D arrays of >= 2 rows, got shapes {a.shape}, {b.shape}")
    return frechet_distance(a.mean(0), np.cov(a, rowvar=False), b.mean(0), np.cov(b, rowvar=False))


def mean_pairwise_distance(x) -> float:
    """Mean Euclidean distance over the distinct pairs of rows of ``x`` (diversity)."""
    from scipy.spatial.distance import pdist

    x = np.asarray(x, np.float64)
    if len(x) < 2:
        raise ValueError(f"mean_pairwise_distance: needs >= 2 rows, got {len(x)}")
    return float(pdist(x).mean())


def coverage(real, fake, k: int) -> float:
    """Coverage (Naeem et al. 2020): the fraction of real points whose k-NN ball (radius: the
    distance to their k-th nearest other real point) holds at least one generated point."""
    from scipy.spatial.distance import cdist

    real, fake = np.asarray(real, np.float64), np.asarray(fake, np.float64)
    if not 1 <= k < len(real):
        raise ValueError(f"coverage: k must be in 1..{len(real) - 1}, got {k}")
    rr = cdist(real, real)
    np.fill_diagonal(rr, np.inf)
    radius = np.sort(rr, axis=1)[:, k - 1]
    return float((cdist(real, fake).min(1) <= radius).mean())
