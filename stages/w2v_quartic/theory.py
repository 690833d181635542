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


# --------------------------------------------------------------------------------------
# the paper's own setup: window weighting, and word2vec's pair weights (subsampling, negatives)
# --------------------------------------------------------------------------------------
WINDOW_WEIGHTINGS = ("uniform", "linear")


def window_weights(window: int, weighting: str) -> np.ndarray:
    """Weight of a pair at distance j = 1..window. ``linear``: (window + 1 - j) / window, the
    official code's (L + 1 - j) up to a constant and the expectation of word2vec's (and
    gensim's) dynamic window, whose effective width is uniform on 1..window; ``uniform``: 1."""
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    if weighting not in WINDOW_WEIGHTINGS:
        raise ValueError(f"unknown window weighting {weighting!r}; allowed: {', '.join(WINDOW_WEIGHTINGS)}")
    j = np.arange(1, window + 1, dtype=np.float64)
    return (window + 1 - j) / window if weighting == "linear" else np.ones(window)


def weighted_window_counts(sentences, keep: np.ndarray, V: int, window: int, weighting: str) -> np.ndarray:
    """Dense symmetric co-occurrence counts among the kept words (ids ``keep`` of a V-word
    vocabulary): a pair at distance j within ``window`` positions of a sentence (of word ids,
    every word in place, so distances are the corpus's) counts ``window_weights(window,
    weighting)[j - 1]`` in both directions; ``uniform`` gives the corpora's own counts."""
    w = window_weights(window, weighting)
    where = np.full(V, -1, dtype=np.int64)
    where[np.asarray(keep)] = np.arange(len(keep))
    K = len(keep)
    cells, weights = [], []
    for s in sentences:
        s = where[np.asarray(s, dtype=np.int64)]
        for off in range(1, min(window, len(s) - 1) + 1):
            a, b = s[:-off], s[off:]
            ok = (a >= 0) & (b >= 0)
            cells.append(a[ok] * K + b[ok])
            weights.append(np.full(int(ok.sum()), w[off - 1]))
    if not cells:
        return np.zeros((K, K))
    C = np.bincount(np.concatenate(cells), np.concatenate(weights), minlength=K * K).reshape(K, K)
    return C + C.T


def keep_probability(u: np.ndarray, sample: float) -> np.ndarray:
    """word2vec's (and gensim's) subsampling: a word of frequency u is kept with probability
    min(1, (sqrt(u / sample) + 1) sample / u); ``sample = 0``: every word is kept."""
    u = np.asarray(u, dtype=np.float64)
    if (u <= 0).any():
        raise ValueError("every kept word needs a positive unigram frequency")
    if sample < 0:
        raise ValueError(f"sample must be >= 0, got {sample}")
    if sample == 0:
        return np.ones_like(u)
    return np.minimum(1.0, (np.sqrt(u / sample) + 1.0) * sample / u)


def word2vec_weights(P: np.ndarray, u: np.ndarray, sample: float, ns_exponent: float,
                     negative: float) -> tuple[np.ndarray, np.ndarray]:
    """The pair weights of word2vec's expected loss (skip-gram, negative sampling), A for the
    positive term and N for the negative term of each pair, normalised so that mean(A + N) = 1.

    With keep probabilities a (``keep_probability``), negatives n_j = u_j^ns_exponent / sum and
    ``negative`` = k of them per positive pair: a positive pair (i, j) occurs with weight
    P_ij a_i a_j; each carries k negative pairs (i, n), so word i meets negative j with weight
    k a_i (P a)_i n_j; symmetrised, as the tied-weight loss only sees x_ij = x_ji:

        A_ij = P_ij a_i a_j,    N_ij = k/2 (a_i (P a)_i n_j + a_j (P a)_j n_i).

    The official code's ``reweight = "sgns"`` has the same form (Psi+ = a_i a_j, Psi- from the
    negative distribution) with (P a)_i replaced by u_i and each factor normalised by its mean.
    The quartic loss with these weights is sum G (x - M*)^2 / 4 with G = A + N and
    M* = 2 (A - N) / G (the paper's Proposition 2): a weighted factorisation, with no closed form.
    """
    P = np.asarray(P, dtype=np.float64)
    u = np.asarray(u, dtype=np.float64)
    if ns_exponent < 0:
        raise ValueError(f"ns_exponent must be >= 0, got {ns_exponent}")
    if negative <= 0:
        raise ValueError(f"negative must be > 0, got {negative}")
    a = keep_probability(u, sample)
    n = u ** ns_exponent
    n = n / n.sum()
    r = a * (P @ a)
    A = P * np.outer(a, a)
    N = 0.5 * negative * (np.outer(r, n) + np.outer(n, r))
    scale = (A + N).mean()
    if scale <= 0:
        raise ValueError("no co-occurrences among the kept words")
    return A / scale, N / scale


def weighted_target(A: np.ndarray, N: np.ndarray) -> np.ndarray:
    """M* = 2 (A - N) / (A + N) (0 where both weights vanish)."""
    G = np.asarray(A) + np.asarray(N)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(G > 0, 2.0 * (A - N) / G, 0.0)


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
