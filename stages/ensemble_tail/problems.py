"""The stochastic problems: per-sample cost vectors of m candidate decisions, and their true
expected costs (so excess risk is exact, no Monte-Carlo evaluation needed).

* ``lp``: min_x E[xi]^T x over the probability simplex in R^m. An LP attains its optimum at a
  vertex and the simplex method returns vertices, so the decisions are the m vertices e_j and
  the cost of vertex j on a data point is xi_j. xi = c + (Lomax(a) - 1/(a-1)) coordinate-wise:
  centred Pareto noise with tail index a (infinite variance for a <= 2). Excess risk of
  vertex j = c_j - min(c).
* ``regression``: model selection among m fixed linear models b_j for y = x^T beta + eps, x ~
  N(0, I_d), eps centred Pareto(a); cost of model j on a point = (y - x^T b_j)^2, true excess
  risk = ||b_j - beta||^2 (the common E eps^2 cancels; a > 2 keeps it finite). The candidate
  set is beta plus perturbations of given squared distances.
"""
from __future__ import annotations

import numpy as np


def centred_pareto(rng: np.random.Generator, a: float, size) -> np.ndarray:
    """Lomax (Pareto II, x_m = 1) draws minus their mean 1/(a-1): mean 0, P(X > t) ~ t^-a."""
    return rng.pareto(a, size=size) - 1.0 / (a - 1.0)


def lp_costs(rng: np.random.Generator, c: np.ndarray, a: float, R: int, n: int) -> np.ndarray:
    """(R, n, m) costs of the m simplex vertices: xi = c + centred Pareto noise."""
    return c[None, None, :] + centred_pareto(rng, a, (R, n, c.size))


def regression_models(d: int, dists: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """beta = ones(d)/sqrt(d) and m = len(dists) candidates b_j = beta + sqrt(dists[j]) u_j
    (u_j fixed orthonormal-ish directions: the unit vectors e_(j mod d) with alternating sign).
    Returns (beta, B) with B (m, d); ||b_j - beta||^2 = dists[j] exactly."""
    beta = np.ones(d) / np.sqrt(d)
    m = len(dists)
    U = np.zeros((m, d))
    for j in range(m):
        U[j, j % d] = 1.0 if (j // d) % 2 == 0 else -1.0
    return beta, beta[None, :] + np.sqrt(np.asarray(dists, float))[:, None] * U


def regression_costs(rng: np.random.Generator, beta: np.ndarray, models: np.ndarray, a: float,
                     R: int, n: int) -> np.ndarray:
    """(R, n, m) squared errors of the m candidate models on fresh (x, y) draws."""
    d = beta.size
    x = rng.standard_normal((R, n, d))
    y = x @ beta + centred_pareto(rng, a, (R, n))
    return (y[..., None] - x @ models.T) ** 2


def true_excess(problem: str, c: np.ndarray | None = None, dists: list[float] | None = None) -> np.ndarray:
    """Exact excess risk of each decision."""
    if problem == "lp":
        return np.asarray(c, float) - float(np.min(c))
    d = np.asarray(dists, float)
    return d - d.min()
