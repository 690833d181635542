"""Offline assortment choice from logged data, three rules, every data set of a radius at once.

For each logged sample size n (prefixes of the largest data set) the ridge MLE theta_hat is fitted
on every (instance, replication) by the batched Newton method, then:

* plug-in: argmax_S R(S, x' theta_hat);
* new-region pessimism (Han, Blanchet & Zhou): argmax_S R(S, theta_hat) - q ||grad_theta R(S, theta_hat)||_{H^-1}
  with H = H_n(theta_hat) + lambda I the MLE's Hessian and q = sqrt(2 log(M / delta)), a union bound
  over the M assortments: one direction per assortment, hence no sqrt(d) and no kappa in the
  leading term;
* old-region pessimism (PASTA-style, Dong et al. 2023, with Oh & Iyengar's region
  ||theta - theta_hat||_{V_n} <= beta_n / (2 kappa)): argmax_S of the minimum of R(S, u) over the
  utility box u_i in x_i' theta_hat +- beta_n / (2 kappa) ||x_i||_{V^-1} that holds the region
  (exact over the box, mnl.log_revenue_box_min; log space). Its first-order version is void:
  the widths exceed 1 for every assortment.

Suboptimality = R(S*, theta*) - R(S_hat, theta*), exact.
"""
from __future__ import annotations

import numpy as np

from .mnl import (confidence_radius, fisher, kappa, log_revenue, log_revenue_box_min, newton_mle,
                  revenue_gradient_norms, widths)

RULES = ("plugin", "new", "old")


def run_offline(env: dict, assortments: np.ndarray, n_grid, capacity: int, ridge: float, delta: float,
                tol: float, max_iter: int, progress: bool = True) -> dict:
    """Suboptimality of the three rules, arrays (radius, n, instance, replication), and the MLEs."""
    from tqdm import tqdm

    x, r, theta_star = env["off_x"], env["off_r"], env["off_theta"]
    logged, choices, rev_all = env["off_logged"], env["off_choices"], env["off_rev_all"]
    nb, I, N, d = x.shape
    reps = logged.shape[2]
    M = len(assortments)
    q = float(np.sqrt(2.0 * np.log(M / delta)))
    sub = {k: np.zeros((nb, len(n_grid), I, reps)) for k in RULES}
    picks = {k: np.zeros((nb, len(n_grid), I, reps), dtype=np.int64) for k in RULES}
    thetas = np.zeros((nb, len(n_grid), I, reps, d))
    iters = 0
    bar = tqdm(total=nb * len(n_grid), desc="offline sweep", mininterval=2.0, disable=not progress)
    for b in range(nb):
        kap = kappa(float(np.linalg.norm(theta_star[b, 0])), capacity)
        items = assortments[logged[b]]                                     # (I, reps, n, K)
        mask = items < N
        xp = np.concatenate([x[b], np.zeros((I, 1, d))], 1)               # (I, N + 1, d)
        X = np.where(mask[..., None], xp[np.arange(I)[:, None, None, None], items], 0.0)
        theta = None
        xq = np.broadcast_to(x[b][:, None], (I, reps, N, d))
        rq = np.broadcast_to(r[b][:, None], (I, reps, N))
        best = rev_all[b].max(-1)[:, None]                                 # (I, 1)
        for k, n in enumerate(n_grid):
            Xn, mn, yn = X[:, :, :n], mask[:, :, :n], choices[b][:, :, :n]
            theta, it, _ = newton_mle(Xn, mn, yn, ridge, theta0=theta, tol=tol, max_iter=max_iter)
            iters += it
            thetas[b, k] = theta
            uh = np.einsum("irnd,ird->irn", xq, theta)
            H = ridge * np.eye(d) + fisher(theta, Xn, mn)
            Xf = Xn.reshape(I, reps, -1, d)
            V = ridge * np.eye(d) + np.swapaxes(Xf, -1, -2) @ Xf
            pk = {"plugin": np.argmax(log_revenue(uh, rq, assortments), -1)}
            rev, gnorm = revenue_gradient_norms(uh, rq, xq, H, assortments)
            pk["new"] = np.argmax(rev - q * gnorm, -1)
            wd = widths(xq, V) * (confidence_radius(n, d, capacity) / (2.0 * kap))
            pk["old"] = np.argmax(log_revenue_box_min(uh - wd, uh + wd, rq, assortments), -1)
            for rule, j in pk.items():
                picks[rule][b, k] = j
                sub[rule][b, k] = best - np.take_along_axis(rev_all[b], j, -1)
            bar.update()
    bar.close()
    return {"suboptimality": sub, "picks": picks, "theta": thetas, "q": q, "newton_iterations": iters}
