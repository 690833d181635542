"""The theory's side: target matrix, closed-form solution, learning times, effective rank.

With the official code's reweighting (``reweight = "omniscient"``, ``ns_weight = 1``), every
pair (i, j) carries weight q_ij = 1 / G_ij with G_ij = P_ij + P_i P_j, and the quartic loss

    L(W) = sum_ij q_ij [ P_ij (-x_ij + x_ij^2 / 4) + P_i P_j (x_ij + x_ij^2 / 4) ],  x = W W^T,

equals ``||W W^T - M*||_F^2 / 4`` up to a constant, with

    M*_ij = (P_ij - P_i P_j) / (1/2 (P_ij + P_i P_j)).

Its minimisers with d columns are W = V_d Lambda_d^(1/2) (top-d eigenpairs of M*, negative
eigenvalues clipped to 0), up to a rotation on the right. Gradient flow dW/dt = (M* - W W^T) W
from small init learns eigendirection k on a sigmoid: its squared projection
p_k = ||v_k^T W||^2 follows p_k(t) = lambda_k / (1 + (lambda_k / p_k(0) - 1) exp(-2 lambda_k t)),
so it reaches lambda_k / 2 at t_k = ln(lambda_k / p_k(0) - 1) / (2 lambda_k), which the paper
writes tau_k ≈ (1 / lambda_k) ln(lambda_k / s_k(0)^2) in its time unit (the factor 2 is the
loss's normalisation). Here times are counted in steps of gradient descent with step eta:
steps ≈ t / eta.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


# --------------------------------------------------------------------------------------
# corpus statistics and the target matrix
# --------------------------------------------------------------------------------------
def keep_words(word_counts: np.ndarray, max_vocab: int = 0) -> np.ndarray:
    """Ids of the words kept: seen at least once, the ``max_vocab`` most frequent (0 = all),
    in their original order."""
    wc = np.asarray(word_counts)
    seen = np.nonzero(wc > 0)[0]
    if max_vocab and len(seen) > max_vocab:
        order = seen[np.argsort(-wc[seen], kind="stable")]
        seen = np.sort(order[:max_vocab])
    return seen


def cooccurrence_stats(counts, word_counts: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P_ij (window co-occurrence counts among the kept words, normalised to sum 1) and P_i
    (unigram frequencies of the kept words, normalised to sum 1), as the official code does."""
    import scipy.sparse as sp

    C = sp.csr_matrix(counts)[keep][:, keep].toarray().astype(np.float64)
    if C.sum() <= 0:
        raise ValueError("no co-occurrences among the kept words")
    wc = np.asarray(word_counts, dtype=np.float64)[keep]
    return C / C.sum(), wc / wc.sum()


def target_matrix(P: np.ndarray, u: np.ndarray) -> np.ndarray:
    """M*_ij = 2 (P_ij - P_i P_j) / (P_ij + P_i P_j); in [-2, 2], -2 where a pair never co-occurs."""
    PP = np.outer(u, u)
    if (u <= 0).any():
        raise ValueError("every kept word needs a positive unigram frequency")
    return 2.0 * (P - PP) / (P + PP)


@dataclass
class Spectrum:
    values: np.ndarray      # all eigenvalues of M*, descending
    vectors: np.ndarray     # the matching eigenvectors (columns), for the top ones kept

    def top(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        return self.values[:d], self.vectors[:, :d]

    @property
    def max_abs(self) -> float:
        return float(np.abs(self.values).max())


def spectrum(M: np.ndarray, keep_vectors: int) -> Spectrum:
    """Eigen-decomposition of the symmetric M* (descending), keeping the top eigenvectors,
    each signed so that its largest-magnitude entry is positive (a deterministic choice)."""
    import torch   # torch's LAPACK follows torch.set_num_threads (see stages.common.device.limit_threads)

    lam_t, U_t = torch.linalg.eigh(torch.as_tensor(np.asarray(M, dtype=np.float64)))
    lam, U = lam_t.numpy()[::-1].copy(), U_t.numpy()[:, ::-1][:, :keep_vectors].copy()
    sign = np.sign(U[np.abs(U).argmax(0), np.arange(U.shape[1])])
    return Spectrum(lam, U * np.where(sign == 0, 1, sign))


def closed_form(lam: np.ndarray, U: np.ndarray) -> np.ndarray:
    """The minimiser of ||W W^T - M*||_F^2 with d = len(lam) columns: V_d Lambda_d^(1/2)."""
    return U * np.sqrt(np.clip(lam, 0, None))


def step_size(spec: Spectrum, lr_scale: float) -> float:
    """eta = lr_scale / max|lambda(M*)|: the large negative eigenvalues (never co-occurring
    pairs, M* = -2) set the stable step near the origin."""
    return lr_scale / spec.max_abs


# --------------------------------------------------------------------------------------
# learning times
# --------------------------------------------------------------------------------------
def predicted_steps(lam: np.ndarray, p0: np.ndarray, eta: float) -> np.ndarray:
    """The paper's step times tau_k = ln(lambda_k / s_k(0)^2) / (2 lambda_k), in steps of size eta
    (NaN where lambda_k <= 0: such directions are never learned)."""
    lam, p0 = np.asarray(lam, float), np.asarray(p0, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.log(lam / p0) / (2 * lam)
    return np.where(lam > 0, t / eta, np.nan)


def logistic_projection(lam: float, p0: float, t: np.ndarray) -> np.ndarray:
    """p(t) of the decoupled flow dp/dt = 2 p (lambda - p) (exact solution)."""
    return lam / (1 + (lam / p0 - 1) * np.exp(-2 * lam * np.asarray(t, float)))


def half_time(lam: float, p0: float) -> float:
    """The exact time at which p(t) reaches lambda / 2 (flow time, not steps)."""
    return float(np.log(lam / p0 - 1) / (2 * lam))


def crossing_steps(steps: np.ndarray, values: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """First logged step at which values[:, k] >= targets[k] (NaN when never)."""
    values = np.asarray(values)
    hit = values >= np.asarray(targets)[None, :]
    first = hit.argmax(0)
    return np.where(hit.any(0), np.asarray(steps)[first], np.nan).astype(float)


# --------------------------------------------------------------------------------------
# effective rank and plateaus
# --------------------------------------------------------------------------------------
def effective_rank(sv2: np.ndarray, threshold: float) -> np.ndarray:
    """Per logged step, how many sorted sigma_k^2 exceed ``threshold`` x their final value."""
    sv2 = np.asarray(sv2)
    return (sv2 >= threshold * sv2[-1][None, :]).sum(1)


def resolvable_levels(lam: np.ndarray, d: int, min_rel_gap: float) -> np.ndarray:
    """Rank levels r in 1..d-1 whose next eigenvalue is separated: (lam_r - lam_r+1) / lam_r >= gap."""
    lam = np.asarray(lam, float)
    r = np.arange(1, d)
    gaps = (lam[r - 1] - lam[r]) / np.abs(lam[r - 1])
    return r[(lam[r - 1] > 0) & (gaps >= min_rel_gap)]


def plateaus(steps: np.ndarray, rank: np.ndarray, levels: np.ndarray, min_frac: float) -> dict:
    """Plateaus of the effective rank: levels r (among ``levels``, 0 < r < final rank) that the
    rank holds for at least ``min_frac`` of the steps it takes to reach its final value.

    Also: the levels among ``levels`` (0 < r < final rank) the rank never takes (skipped: two or
    more directions learned together), the largest single jump of the rank between two logged
    steps, the rank levels in order of appearance, and each plateau's [first, last] step.
    """
    steps, rank = np.asarray(steps), np.asarray(rank)
    final = int(rank[-1])
    reach = steps[np.argmax(rank >= final)] if final > 0 else steps[-1]
    held = {}
    for r in levels:
        if not 0 < r < final:
            continue
        at = np.nonzero(rank == r)[0]
        if len(at) == 0:
            continue
        # the span from the first step at level r to the first step above it
        above = np.nonzero((rank > r) & (np.arange(len(rank)) > at[0]))[0]
        end = steps[above[0]] if len(above) else steps[-1]
        duration = end - steps[at[0]]
        if duration >= min_frac * max(reach, 1):
            held[int(r)] = [int(steps[at[0]]), int(end)]
    changes = np.diff(rank)
    order = [int(rank[0])] + [int(v) for v, c in zip(rank[1:], changes) if c != 0]
    skipped = [int(r) for r in levels if 0 < r < final and not (rank == r).any()]
    return {"n_plateaus": len(held), "plateaus": held, "final_rank": final, "skipped_levels": skipped,
            "steps_to_final_rank": int(reach), "max_jump": int(changes.max()) if len(changes) else 0,
            "levels_in_order": order, "monotone": bool((changes >= 0).all())}


# --------------------------------------------------------------------------------------
# subspaces
# --------------------------------------------------------------------------------------
def subspace_overlap(W: np.ndarray, U: np.ndarray) -> float:
    """||Q_W^T U||_F^2 / k: mean squared cosine of the principal angles between span(W) and
    span(U) (U orthonormal, k columns); 1 = the same subspace, ~k/V for random ones."""
    W = np.asarray(W, float)
    if not np.isfinite(W).all() or np.abs(W).max() == 0:
        return float("nan")
    Q, s, _ = np.linalg.svd(W, full_matrices=False)
    Q = Q[:, s > 0]
    return float(np.linalg.norm(Q.T @ U) ** 2 / U.shape[1])
