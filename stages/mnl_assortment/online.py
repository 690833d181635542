"""Online UCB for the linear MNL bandit, several confidence widths ("arms"), every run at once.

Runs are laid out as (arm, radius, run), flattened; an arm (:class:`Arm`) is a confidence width
c_t ||x||_{M^-1} of the same UCB. Each round:

1. optimistic utilities z_i = x_i' theta_hat + c_t ||x_i||_{M^-1} for the N items on show, with
   * ``new`` (Han, Blanchet & Zhou): M = H_t(theta_hat) + lambda I, the MLE's Hessian (the MNL
     Fisher information of the logged assortments at the estimate), c_t = beta_t;
   * ``old`` (Oh & Iyengar 2021, UCB-MNL): M = V_t = lambda I + sum x x' (Gram matrix of the
     offered items), c_t = beta_t / (2 kappa);
   * other arms (controls, calibration) combine a norm (Hessian or Gram), the factor 1/(2 kappa)
     or not, and a multiplier ``scale`` of c_t (0: greedy, the plug-in MLE's best assortment);
   with beta_t = sqrt(2 d log(1 + t K / d) + 2 log t) for every arm;
2. offer argmax_S R(S, z) over the enumerated assortments (log space: the old widths reach 1e4+);
3. the customer chooses by the true model (inverse CDF of the round's shared uniform: every arm
   meets the same items and the same choice noise); the round's expected-revenue regret
   R(S*_t, theta*) - R(S_t, theta*) is recorded;
4. V_t and H_t gain the round's terms (H at the current estimate); at refit rounds (geometric
   schedule, and round T) the ridge MLE is recomputed on all data by the batched Newton method
   (warm start) and H is recomputed at the new estimate over all rounds. At every refit the
   distance of the estimate from theta* is recorded in both norms, as a share of the kappa-free
   radius: ``region_h`` = ||theta_hat - theta*||_{H_t} / beta_t and ``region_v`` =
   ||theta_hat - theta*||_{V_t} / beta_t (<= 1: theta* lies in that region; the old region's
   is region_v * 2 kappa).

Every run's arithmetic is its own (row-wise numpy, per-run LAPACK calls), so a run's regrets do
not depend on which other runs share the batch (checked bit for bit in
tests/mnl_assortment/test_seeds.py and benchmarks/mnl_assortment/seeds.py).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .mnl import (choice_probs, confidence_radius, fisher, kappa, log_revenue, newton_mle, sample_choices,
                  widths)


@dataclass(frozen=True)
class Arm:
    """A confidence width of the UCB: ``scale`` * beta_t [/ (2 kappa)] * ||x||_{M^-1}, M the
    MLE's Hessian (``norm = "hessian"``) or the Gram matrix (``"gram"``), each + lambda I."""
    name: str
    norm: str = "hessian"
    kappa: bool = False
    scale: float = 1.0

    def __post_init__(self):
        if self.norm not in ("hessian", "gram"):
            raise ValueError(f"arm {self.name}: norm must be 'hessian' or 'gram', got {self.norm!r}")
        if not self.scale >= 0:
            raise ValueError(f"arm {self.name}: scale must be >= 0, got {self.scale}")


NEW = Arm("new", "hessian", False, 1.0)        # the paper's region (Han, Blanchet & Zhou)
OLD = Arm("old", "gram", True, 1.0)            # Oh & Iyengar (2021)'s region
GRAM = Arm("gram", "gram", False, 1.0)         # Oh & Iyengar's region with its 1/(2 kappa) dropped
GREEDY = Arm("greedy", "hessian", False, 0.0)  # no width: the plug-in MLE's best assortment
ARMS = (NEW, OLD, GRAM, GREEDY)                # what the train stage runs


def refit_rounds(T: int, growth: float) -> set[int]:
    """Rounds (1-based counts of data) after which the MLE is refitted: 1, then
    t_{k+1} = max(t_k + 1, ceil(growth t_k)), and T."""
    out, t = {T}, 1
    while t < T:
        out.add(t)
        t = max(t + 1, int(np.ceil(t * growth)))
    return out


def run_online(env: dict, assortments: np.ndarray, n_items: int, capacity: int, ridge: float,
               growth: float, tol: float, max_iter: int, arms=(NEW, OLD), progress: bool = True) -> dict:
    """Simulate every (arm, radius, run) for T rounds; returns per-round regrets and the final
    estimates and matrices. ``env``'s online arrays hold S runs (axis 1 of ``on_feats``)."""
    from tqdm import tqdm

    feats, revs, U = env["on_feats"], env["on_revs"], env["on_uniforms"]
    dirs, radii, best_rev = env["on_dirs"], env["on_radii"], env["on_best_rev"]
    T, S, N, d = feats.shape
    nb, na = len(radii), len(arms)
    run_m = np.repeat(np.arange(na), nb * S)
    run_b = np.tile(np.repeat(np.arange(nb), S), na)
    run_s = np.tile(np.arange(S), na * nb)
    R = len(run_m)
    theta_star = radii[run_b][:, None] * dirs[run_s]
    kap = np.array([kappa(B, capacity) for B in radii])[run_b]
    scale = np.array([a.scale for a in arms])[run_m]
    mult = scale * np.where(np.array([a.kappa for a in arms])[run_m], 1.0 / (2.0 * kap), 1.0)
    is_new = (np.array([a.norm == "hessian" for a in arms])[run_m])[:, None, None]
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
    refit_at = sorted(refits)
    region_h = np.zeros((R, len(refit_at)))
    region_v = np.zeros((R, len(refit_at)))
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
            k = refit_at.index(t + 1)
            err = theta - theta_star
            region_h[:, k] = np.sqrt(np.einsum("rd,rde,re->r", err, H, err)) / beta
            region_v[:, k] = np.sqrt(np.einsum("rd,rde,re->r", err, V, err)) / beta
    return {"regret": regret, "chosen": chosen, "theta": theta, "theta_star": theta_star, "H": H, "V": V,
            "run_method": run_m, "run_radius": run_b, "run_seed": run_s, "X": Xh, "mask": Mh, "y": yh,
            "kappa": kap, "refits": len(refits), "refit_rounds": np.array(refit_at), "region_h": region_h,
            "region_v": region_v, "newton_seconds": newton_s, "newton_iterations": newton_iters}
