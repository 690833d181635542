"""Online UCB for the linear MNL bandit, both confidence widths, every run at once.

Runs are laid out as (method, radius, seed), flattened; method 0 = "new", 1 = "old". Each round:

1. optimistic utilities z_i = x_i' theta_hat + c_t ||x_i||_{M^-1} for the N items on show, with
   * new (Han, Blanchet & Zhou): M = H_t(theta_hat) + lambda I, the MLE's Hessian (the MNL Fisher
     information of the logged assortments at the estimate), c_t = beta_t;
   * old (Oh & Iyengar 2021, UCB-MNL): M = V_t = lambda I + sum x x' (Gram matrix of the offered
     items), c_t = beta_t / (2 kappa);
   with beta_t = sqrt(2 d log(1 + t K / d) + 2 log t) for both: the only differences are the norm
   and the factor 1/(2 kappa);
2. offer argmax_S R(S, z) over the enumerated assortments (log space: the old widths reach 1e4+);
3. the customer chooses by the true model (inverse CDF of the round's shared uniform); the
   round's expected-revenue regret R(S*_t, theta*) - R(S_t, theta*) is recorded;
4. V_t and H_t gain the round's terms (H at the current estimate); at refit rounds (geometric
   schedule, and round T) the ridge MLE is recomputed on all data by the batched Newton method
   (warm start) and H is recomputed at the new estimate over all rounds.
"""
from __future__ import annotations

import time

import numpy as np

from .mnl import (choice_probs, confidence_radius, fisher, kappa, log_revenue, newton_mle, sample_choices,
                  widths)


def refit_rounds(T: int, growth: float) -> set[int]:
    """Rounds (1-based counts of data) after which the MLE is refitted: 1, then
    t_{k+1} = max(t_k + 1, ceil(growth t_k)), and T."""
    out, t = {T}, 1
    while t < T:
        out.add(t)
        t = max(t + 1, int(np.ceil(t * growth)))
    return out


def run_online(env: dict, assortments: np.ndarray, n_items: int, capacity: int, ridge: float,
               growth: float, tol: float, max_iter: int, progress: bool = True) -> dict:
    """Simulate every (method, radius, seed) run for T rounds; returns per-round regrets and the
    final estimates and matrices."""
    from tqdm import tqdm

    feats, revs, U = env["on_feats"], env["on_revs"], env["on_uniforms"]
    dirs, radii, best_rev = env["on_dirs"], env["on_radii"], env["on_best_rev"]
    T, S, N, d = feats.shape
    nb = len(radii)
    run_m = np.repeat(np.arange(2), nb * S)
    run_b = np.tile(np.repeat(np.arange(nb), S), 2)
    run_s = np.tile(np.arange(S), 2 * nb)
    R = len(run_m)
    theta_star = radii[run_b][:, None] * dirs[run_s]
    kap = np.array([kappa(B, capacity) for B in radii])[run_b]
    mult = np.where(run_m == 0, 1.0, 1.0 / (2.0 * kap))
    is_new = (run_m == 0)[:, None, None]
    K = assortments.shape[1]
    Xh = np.zeros((R, T, K, d))
    Mh = np.zeros((R, T, K), dtype=bool)
    yh = np.full((R, T), -1, dtype=np.int64)
    theta = np.zeros((R, d))
    eye = ridge * np.eye(d)
    H = np.repeat(eye[None], R, 0)
    V = H.copy()
    regret = np.zeros((R, T))
    chosen = np.zeros((R, T), dtype=np.int64)
    refits = refit_rounds(T, growth)
    newton_s, newton_iters = 0.0, 0
    pad = np.zeros((R, 1, d))
    for t in tqdm(range(T), desc="online UCB", mininterval=2.0, disable=not progress):
        x = feats[t][run_s]                                               # (R, N, d)
        r = revs[t][run_s]
        beta = confidence_radius(t + 1, d, capacity)
        w = widths(x, np.where(is_new, H, V))
        z = np.einsum("rnd,rd->rn", x, theta) + (mult * beta)[:, None] * w
        j = np.argmax(log_revenue(z, r, assortments), 1)
        items = assortments[j]                                            # (R, K), padded with N
        mask = items < n_items
        xs = np.where(mask[..., None], np.take_along_axis(np.concatenate([x, pad], 1), items[..., None], 1), 0.0)
        us = np.einsum("rkd,rd->rk", xs, theta_star)                     # true utilities offered
        rs = np.take_along_axis(np.concatenate([r, np.zeros((R, 1))], 1), items, 1)
        regret[:, t] = best_rev[run_b, t, run_s] - np.sum(choice_probs(us, mask) * rs, -1)
        chosen[:, t] = j
        Xh[:, t], Mh[:, t] = xs, mask
        yh[:, t] = sample_choices(us, mask, U[t][run_s])
        V += np.einsum("rkd,rke->rde", xs, xs)
        H += fisher(theta, xs[:, None], mask[:, None])
        if t + 1 in refits:
            t0 = time.perf_counter()
            theta, it, _ = newton_mle(Xh[:, :t + 1], Mh[:, :t + 1], yh[:, :t + 1], ridge, theta0=theta,
                                      tol=tol, max_iter=max_iter)
            H = eye + fisher(theta, Xh[:, :t + 1], Mh[:, :t + 1])
            newton_s += time.perf_counter() - t0
            newton_iters += it
    return {"regret": regret, "chosen": chosen, "theta": theta, "theta_star": theta_star, "H": H, "V": V,
            "run_method": run_m, "run_radius": run_b, "run_seed": run_s, "X": Xh, "mask": Mh, "y": yh,
            "kappa": kap, "refits": len(refits), "newton_seconds": newton_s, "newton_iterations": newton_iters}
