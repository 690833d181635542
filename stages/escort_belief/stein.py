"""SVGD and ESCORT particle updates, vectorised over a batch of independent beliefs.

Shapes: particles ``X`` (B, n, d) -- B independent beliefs (replications or episodes), n
particles each, state dimension d; ``score(X)`` returns grad log p at every particle, (B, n, d).

* **SVGD** (Liu & Wang 2016): phi(x_i) = 1/n sum_j [k(x_j, x_i) grad log p(x_j)
  + grad_{x_j} k(x_j, x_i)], RBF kernel k = exp(-|x - y|^2 / h) with the median heuristic
  h = med^2 / log(n + 1) (med = median pairwise distance, recomputed every iteration).
* **ESCORT** (Zhang et al., NeurIPS 2025), our reading of the paper, written from scratch:
  1. *correlation-aware sliced projections*: the directions v_r are the eigenvectors of the
     particles' covariance (recomputed every iteration), and the update adds a sliced-SVGD
     term with a 1-D RBF kernel on each projection z_r = v_r . x (median heuristic per
     direction): phi_r(x_i) = 1/n sum_j [k_r(z_jr, z_ir) v_r . grad log p(x_j)
     + d/dz_jr k_r(z_jr, z_ir)], mapped back along v_r. The total Stein direction is
     (1 - lambda_corr) phi_SVGD + lambda_corr sum_r v_r phi_r, i.e. SVGD with the matrix-valued
     kernel (1 - lambda) k I + lambda sum_r k_r v_r v_r^T, whose fixed point is still p.
  2. *temporal consistency*: lambda_temp times the negative gradient of 1/2 SW_2^2 between the
     particles and the predicted (propagated) particles of this time step, along the same
     directions: each particle moves toward the predicted particle of the same rank in each
     projection, averaged over the directions (uniform weights).
  The official code (scope-lab-vu/ESCORT, escort/svgd.py) differs: it stores ``lambda_corr``
  but never uses it, computes the temporal term once before the iteration loop, multiplies
  the repulsion by 1 + 0.1 d, clips updates to [-10, 10], and resamples low-density particles
  every 20 iterations. ``stein_update`` does none of these (README: escort_belief).
* **ESCORT as the official code implements it** (``official_update`` and helpers below, written
  from escort/svgd.py ImprovedSVGD, kernel.py ImprovedRBFKernel and gswd.py ImprovedGSWD with
  their defaults, batched over replications): plain steps of 0.01 for 50 iterations of the SVGD
  update with the official kernel (bandwidth = median distance x 0.5 x sqrt(d)/2, used as
  exp(-|x-y|^2 / (2 h))), repulsion x (1 + 0.1 d), scores clipped to +-100 and the update to
  +-10; a GSWD temporal term computed once before the loop and added unchanged; particles with
  density below 10% of the max copied (plus noise) from above-median ones at iterations 20, 40;
  a per-batch stop when the mean move falls below 1e-5; lambda_corr plays no part.
* Step: RMSprop-style AdaGrad of the SVGD reference code (alpha = 0.9, fudge 1e-6), step size
  ``step`` decaying linearly to ``step * final_step_frac`` over the iterations of a time step.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np

Score = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class SteinConfig:
    iters: int
    step: float
    final_step_frac: float = 0.1
    lambda_corr: float = 0.0      # 0 = plain SVGD
    lambda_temp: float = 0.0
    alpha: float = 0.9
    fudge: float = 1e-6


def sq_dists(X: np.ndarray) -> np.ndarray:
    """Pairwise squared distances within each batch, (B, n, n), clipped at 0."""
    sq = (X * X).sum(-1)
    D = np.add(sq[:, :, None], sq[:, None, :])
    D -= (2.0 * X) @ X.transpose(0, 2, 1)     # sq_i + sq_j - 2 x_i . x_j (gemm, as numpy's X @ X.T is not)
    return np.maximum(D, 0.0, out=D)


@functools.lru_cache(maxsize=16)
def _upper_flat(n: int) -> np.ndarray:
    iu = np.triu_indices(n, 1)
    return iu[0] * n + iu[1]


def upper_pairs(D: np.ndarray) -> np.ndarray:
    """The strictly upper-triangular entries (i < j) of each (n, n) matrix of D (B, n, n), (B, n(n-1)/2)."""
    n = D.shape[-1]
    return np.take(D.reshape(len(D), n * n), _upper_flat(n), axis=1)


def median_bandwidth(D2: np.ndarray) -> np.ndarray:
    """h = median of the off-diagonal squared distances / log(n + 1), per batch, (B,)."""
    n = D2.shape[-1]
    med = np.median(upper_pairs(D2), axis=1)
    return np.maximum(med, 1e-12) / np.log(n + 1.0)


def rbf_in_place(D2: np.ndarray, h: np.ndarray) -> np.ndarray:
    """exp(-D2 / h) written over D2 (h broadcasts against D2): the kernel matrix without the
    temporaries (fresh (B, n, n) arrays cost more than the arithmetic at these sizes)."""
    np.divide(D2, h, out=D2)
    np.negative(D2, out=D2)
    return np.exp(D2, out=D2)


def svgd_direction(X: np.ndarray, S: np.ndarray) -> np.ndarray:
    """The SVGD direction phi (B, n, d) for particles X and their scores S."""
    n = X.shape[1]
    D2 = sq_dists(X)
    h = median_bandwidth(D2)[:, None, None]
    K = rbf_in_place(D2, h)
    drive = K @ S
    # sum_j grad_{x_j} k(x_j, x_i) = (2/h) sum_j (x_i - x_j) K_ij
    repulse = (2.0 / h) * (X * K.sum(-1, keepdims=True) - K @ X)
    return (drive + repulse) / n


def correlation_directions(X: np.ndarray) -> np.ndarray:
    """Eigenvectors of each batch's particle covariance, (B, d, d) with directions in columns."""
    Xc = X - X.mean(1, keepdims=True)
    C = Xc.transpose(0, 2, 1) @ Xc / max(X.shape[1] - 1, 1)
    return np.linalg.eigh(C)[1]


def sliced_direction(X: np.ndarray, S: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Sliced SVGD along the columns of V (orthonormal): 1-D RBF kernels on each projection
    z_r = X v_r with a per-direction median bandwidth; returns sum_r v_r phi_r, (B, n, d)."""
    B, n, d = X.shape
    Z, G = X @ V, S @ V                                   # projections and projected scores
    # the bandwidth: entry k = n^2 // 2 + n // 2 of the n^2 sorted squared differences, i.e. after
    # the n zeros of the diagonal, entry (k - n) // 2 of the pairs i < j (each appears twice)
    k = (n * n // 2 + n // 2 - n) // 2
    phi = np.empty_like(Z)
    D2 = np.empty((B, n, n))                              # reused for every direction
    for r in range(d):                                    # one direction at a time: (B, n, n) arrays
        z = Z[:, :, r]
        np.subtract(z[:, :, None], z[:, None, :], out=D2)
        np.square(D2, out=D2)
        med = np.partition(upper_pairs(D2), k, axis=1)[:, k]
        h = (np.maximum(med, 1e-12) / np.log(n + 1.0))[:, None]
        K = rbf_in_place(D2, h[:, :, None])               # symmetric in (i, j)
        drive = (K @ G[:, :, r:r + 1])[:, :, 0]
        repulse = (2.0 / h) * (z * K.sum(-1) - (K @ z[:, :, None])[:, :, 0])
        phi[:, :, r] = (drive + repulse) / n
    return phi @ V.transpose(0, 2, 1)


def temporal_pull(X: np.ndarray, X_pred: np.ndarray, V: np.ndarray) -> np.ndarray:
    """-grad of 1/2 SW_2^2(X, X_pred) along the columns of V (uniform weights), per particle:
    the displacement toward the predicted particle of the same rank in every projection."""
    Z, Zp = X @ V, np.sort(X_pred @ V, axis=1)
    ranks = np.argsort(np.argsort(Z, axis=1), axis=1)
    target = np.take_along_axis(Zp, ranks, axis=1)
    return ((target - Z) @ V.transpose(0, 2, 1)) / V.shape[-1]


def stein_update(X: np.ndarray, score: Score, cfg: SteinConfig,
                 X_pred: np.ndarray | None = None) -> np.ndarray:
    """Run ``cfg.iters`` Stein iterations from X (SVGD when lambda_corr = lambda_temp = 0)."""
    X = np.array(X, dtype=float, copy=True)
    hist = None
    use_dirs = cfg.lambda_corr > 0 or (cfg.lambda_temp > 0 and X_pred is not None)
    for it in range(cfg.iters):
        S = score(X)
        phi = svgd_direction(X, S)
        if use_dirs:
            V = correlation_directions(X)
            if cfg.lambda_corr > 0:
                phi = (1.0 - cfg.lambda_corr) * phi + cfg.lambda_corr * sliced_direction(X, S, V)
            if cfg.lambda_temp > 0 and X_pred is not None:
                phi = phi + cfg.lambda_temp * temporal_pull(X, X_pred, V)
        g2 = phi * phi
        hist = g2 if hist is None else cfg.alpha * hist + (1.0 - cfg.alpha) * g2
        frac = 1.0 - (1.0 - cfg.final_step_frac) * it / max(cfg.iters - 1, 1)
        X += cfg.step * frac * phi / (cfg.fudge + np.sqrt(hist))
    return X


# --------------------------------------------------------------------------------------------
# ESCORT as the official code implements it (scope-lab-vu/ESCORT escort/svgd.py ImprovedSVGD,
# escort/kernel.py ImprovedRBFKernel, escort/gswd.py ImprovedGSWD), rewritten batched.
# ---------------------------------------------------------------------------------------------
LogpScore = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class OfficialConfig:
    """The official code's defaults (escort/agent.py ESCORTConfig and the classes' signatures)."""
    iters: int = 50                 # svgd_max_iter
    step: float = 0.01              # svgd_step_size: plain gradient steps, no AdaGrad
    tol: float = 1e-5               # stop when |X_new - X_old|_F / n < tol
    lambda_temp: float = 0.1        # lambda_corr (0.1) is stored there but never used
    bandwidth_scale: float = 0.5    # adaptive bandwidth = med |x - y| * scale * sqrt(d) / 2
    min_bandwidth: float = 1e-5
    max_bandwidth: float = 100.0
    score_clip: float = 100.0       # scores clipped to [-100, 100] before the update
    update_clip: float = 10.0       # the SVGD update clipped to [-10, 10]
    repulsion_per_dim: float = 0.1  # repulsion x (1 + 0.1 d)
    resample_every: int = 20        # low-density resampling at iterations 20, 40, ...
    resample_threshold: float = 0.1  # density < 0.1 x the max density
    logp_clip: float = 30.0         # densities = exp(clip(log p, -30, 30))
    n_projections: int = 10         # GSWD (temporal term) projections, 'optimized'
    proj_steps: int = 5
    proj_lr: float = 0.01
    proj_momentum: float = 0.9


def official_svgd_direction(X: np.ndarray, S: np.ndarray, cfg: OfficialConfig) -> np.ndarray:
    """ImprovedSVGD._compute_svgd_update, batched: K = exp(-|x-y|^2 / (2 h)) with h = median
    pairwise distance (not squared) x scale x sqrt(d)/2 clipped to [min, max]; repulsion
    sum_j K_ij (x_i - x_j) / h times 1 + 0.1 d; (drive + repulsion) / n clipped to [-10, 10]."""
    B, n, d = X.shape
    D2 = sq_dists(X)
    off = ~np.eye(n, dtype=bool)
    med = np.median(np.sqrt(D2[:, off]), axis=1)
    h = np.clip(med * cfg.bandwidth_scale * np.sqrt(d) / 2, cfg.min_bandwidth, cfg.max_bandwidth)[:, None, None]
    K = np.exp(-D2 / (2 * h))
    S = np.clip(np.nan_to_num(S, nan=0.0, posinf=0.0, neginf=0.0), -cfg.score_clip, cfg.score_clip)
    drive = K @ S
    repulse = (X * K.sum(-1, keepdims=True) - K @ X) / h * (1.0 + cfg.repulsion_per_dim * d)
    return np.clip((drive + repulse) / n, -cfg.update_clip, cfg.update_clip)


def official_resample(rng, X: np.ndarray, logp: np.ndarray, cfg: OfficialConfig) -> np.ndarray:
    """ImprovedSVGD._detect_and_resample_particles per batch: particles whose density is below
    ``resample_threshold`` x the batch's max are replaced by a uniformly drawn particle of density
    above the median (all particles' pre-resampling positions) plus N(0, (0.1 (1 + 0.05 d))^2).
    ``rng``: a Generator, or a batch.SeedRngs (each row draws from its seed's generator)."""
    from .batch import as_rows

    B, n, d = X.shape
    X = X.copy()
    if n < 10:
        return X
    rows = as_rows(rng, B)
    dens = np.exp(np.clip(logp, -cfg.logp_clip, cfg.logp_clip))
    for b in range(B):                       # B is small (replications); n-vectorised inside
        rng = rows.row(b)
        mx = dens[b].max()
        nd = dens[b] / mx if mx > 0 else np.ones(n)
        low = np.flatnonzero(nd < cfg.resample_threshold)
        if len(low) == 0:
            continue
        high = np.flatnonzero(nd > np.median(nd))
        if len(high) == 0:
            high = rng.choice(n, size=n // 2, replace=False)
        src = rng.choice(high, size=len(low))
        X[b, low] = X[b, src] + rng.standard_normal((len(low), d)) * 0.1 * (1.0 + 0.05 * d)
    return X


def gswd_fit(rng, source: np.ndarray, target: np.ndarray,
             cfg: OfficialConfig) -> tuple[np.ndarray, np.ndarray]:
    """ImprovedGSWD.fit ('optimized', correlation-aware), batched: random unit projections
    (P, d) per batch improved by ``proj_steps`` momentum steps of a finite-difference (eps 1e-6)
    gradient *ascent* of each projection's 1-D W1 distance, the gradient reshaped by the
    eigen-decomposition of the pooled covariance (g -> g V diag(sqrt(lam)) V^T); weights = the
    normalised W1 distances of the last step (floored at 1e-3). Returns (proj (B, P, d), w (B, P))."""
    B, n, d = source.shape
    P = cfg.n_projections
    pooled = np.concatenate([source, target], 1)
    c = pooled - pooled.mean(1, keepdims=True)
    cov = c.transpose(0, 2, 1) @ c / (pooled.shape[1] - 1) + 1e-6 * np.eye(d)
    lam, V = np.linalg.eigh(0.5 * (cov + cov.transpose(0, 2, 1)))
    lam = np.maximum(lam, 1e-10)
    proj = rng.standard_normal((B, P, d))
    proj /= np.linalg.norm(proj, axis=-1, keepdims=True) + 1e-10
    vel = np.zeros_like(proj)
    eps = 1e-6

    def w1(pr):                                 # pr (B, ..., d) -> W1 per projection (B, ...)
        s = np.sort(np.einsum("bnd,b...d->b...n", source, pr), -1)
        t = np.sort(np.einsum("bnd,b...d->b...n", target, pr), -1)
        return np.abs(s - t).mean(-1)

    weights = np.full((B, P), 1.0 / P)
    for step in range(cfg.proj_steps):
        dist = w1(proj)                                           # (B, P)
        weights = np.maximum(1e-3, dist)
        weights = weights / weights.sum(-1, keepdims=True)
        pert = proj[:, :, None, :] + eps * np.eye(d)[None, None]  # (B, P, d, d): coordinate j perturbed
        pert /= np.linalg.norm(pert, axis=-1, keepdims=True)
        grad = (w1(pert) - dist[..., None]) / eps                 # (B, P, d)
        grad = ((grad @ V) * np.sqrt(lam)[:, None, :]) @ V.transpose(0, 2, 1)
        vel = cfg.proj_momentum * vel + cfg.proj_lr / (1.0 + 0.1 * step) * grad
        proj = proj + vel
        proj /= np.linalg.norm(proj, axis=-1, keepdims=True) + 1e-10
    return proj, weights


def gswd_regularizer(source: np.ndarray, target: np.ndarray, proj: np.ndarray, weights: np.ndarray,
                     lam: float) -> np.ndarray:
    """ImprovedGSWD.get_regularizer, batched (equal set sizes): for every projection p, the target
    particle of rank k moves by lam w_p (source particle of rank k - itself), full vectors summed
    over the projections."""
    si = np.argsort(np.einsum("bnd,bpd->bpn", source, proj), -1)   # (B, P, n)
    ti = np.argsort(np.einsum("bnd,bpd->bpn", target, proj), -1)
    B, P, n = si.shape
    reg = np.zeros_like(target)
    bi = np.arange(B)[:, None]
    for p in range(P):
        dirs = source[bi, si[:, p]] - target[bi, ti[:, p]]          # (B, n, d), rank k
        reg[bi, ti[:, p]] += lam * weights[:, p, None, None] * dirs
    return reg


def official_update(X: np.ndarray, logp_score: LogpScore, cfg: OfficialConfig, rng,
                    temp: np.ndarray | None = None) -> np.ndarray:
    """ImprovedSVGD.update, batched: ``temp`` (the temporal term, computed once by the caller before
    the loop, or None) is added unchanged every iteration; X += step (clipped SVGD update + temp);
    at iterations t > 0 with t % 20 == 0 the low-density particles are resampled; a batch stops
    once |X_new - X_old|_F / n < tol, and from then on neither moves nor draws (its official loop
    has ended), so a batch's draws do not depend on the other batches beside it. ``rng``: a
    Generator, or a batch.SeedRngs (each batch draws from its seed's generator)."""
    from .batch import as_rows

    X = np.array(X, dtype=float, copy=True)
    active = np.ones(X.shape[0], dtype=bool)
    rows = as_rows(rng, X.shape[0])
    for it in range(cfg.iters):
        old = X.copy()
        _, S = logp_score(X)
        upd = official_svgd_direction(X, S, cfg)
        if temp is not None:
            upd = upd + temp
        X = np.where(active[:, None, None], X + cfg.step * upd, X)
        if it > 0 and it % cfg.resample_every == 0:
            logp, _ = logp_score(X)
            live = np.flatnonzero(active)
            X[live] = official_resample(rows.subset(live), X[live], logp[live], cfg)
        diff = np.linalg.norm((X - old).reshape(X.shape[0], -1), axis=1) / X.shape[1]
        active &= diff >= cfg.tol
        if not active.any():
            break
    return X
