"""Vectorized base learner and vote ensembles for finite-decision stochastic optimisation.

Every problem here has m candidate decisions (the 5 vertices of the simplex for the LP) and,
for each data point, a cost vector of length m (the cost of every decision on that point).
SAA (sample-average approximation) on a sample is then the argmin of the column sums, so a
batch of R replications x B subsamples reduces to index arrays -> gathered sums -> argmin:
no Python loop over replications or subsamples (only over the k draws of a subsample).

The ensembles follow the official VoteEnsemble code (VoteEnsemble.py, MoVE / ROVE):

* MoVE: B subsamples of size k drawn without replacement, SAA on each, output the most
  frequent solution. Ties: the official loop keeps the candidate that *first* reached the
  final maximum count, i.e. the tied candidate whose last vote comes earliest; same here.
* ROVE: phase I = the distinct SAA solutions of B1 subsamples of size k1 (the candidates);
  phase II = B2 fresh subsamples of size k2, on each the gap of every candidate to the best
  candidate; output the candidate most often epsilon-optimal (ties: first retrieved).
  Automatic epsilon: the smallest epsilon at which some candidate is epsilon-optimal on at
  least a fraction p (autoEpsilonProb, 0.5) of the phase-II subsamples. The official code
  finds it by doubling + bisection to a 1e-3 tolerance; here it is computed exactly as an
  order statistic (min over candidates of the ceil(p*B2)-th smallest gap).
* ROVEs: ROVE with the sample split in halves: phase I on the first half, voting on the
  second, epsilon chosen on the first half (as the official code does).
* bagging-average: the mean of the B subsample solutions as a point of the simplex (the
  vote frequencies), the variance-reduction baseline; its cost is linear in that point.
"""
from __future__ import annotations

import numpy as np


def floyd_subsets(rng: np.random.Generator, n: int, k: int, size: int) -> np.ndarray:
    """``size`` independent uniform k-subsets of range(n), shape (size, k), int64.

    Robert Floyd's algorithm, vectorized over rows: for j = n-k .. n-1 draw t uniform in
    [0, j]; keep t unless the row already holds it, then keep j. Each row is a uniform random
    k-subset (order inside a row is not uniform; sums do not care)."""
    if not 1 <= k <= n:
        raise ValueError(f"subsample size k={k} must be in [1, n={n}]")
    out = np.empty((size, k), dtype=np.int64)
    for i, j in enumerate(range(n - k, n)):
        t = rng.integers(0, j + 1, size=size)
        dup = (out[:, :i] == t[:, None]).any(axis=1) if i else np.zeros(size, bool)
        out[:, i] = np.where(dup, j, t)
    return out


def subsample_sums(costs: np.ndarray, rng: np.random.Generator, k: int, B: int) -> np.ndarray:
    """costs (R, n, m) -> column sums over B random k-subsets of each replication, (R, B, m)."""
    R, n, m = costs.shape
    idx = floyd_subsets(rng, n, k, R * B).reshape(R, B, k)
    flat = costs.reshape(R * n, m)
    rows = (np.arange(R) * n)[:, None, None] + idx
    return flat[rows].sum(axis=2)


def saa(costs: np.ndarray) -> np.ndarray:
    """SAA on every replication's whole sample: (R, n, m) -> chosen decision (R,)."""
    return costs.sum(axis=1).argmin(axis=1)


def vote_counts(votes: np.ndarray, m: int) -> np.ndarray:
    """votes (R, B) in range(m) -> counts (R, m)."""
    return (votes[..., None] == np.arange(m)).sum(axis=1)


def _first_pos(votes: np.ndarray, m: int) -> np.ndarray:
    """Position of each decision's first vote, (R, m); B when it never got one."""
    hit = votes[..., None] == np.arange(m)                     # (R, B, m)
    return np.where(hit.any(axis=1), hit.argmax(axis=1), votes.shape[1])


def _last_pos(votes: np.ndarray, m: int) -> np.ndarray:
    hit = votes[:, ::-1, None] == np.arange(m)
    return votes.shape[1] - 1 - hit.argmax(axis=1)


def move(votes: np.ndarray, m: int) -> np.ndarray:
    """MoVE's output per replication: the mode of the subsample solutions (R, B) -> (R,)."""
    B = votes.shape[1]
    counts = vote_counts(votes, m)
    score = counts * (B + 1) - np.where(counts > 0, _last_pos(votes, m), 0)
    return score.argmax(axis=1)


def auto_epsilon(gaps: np.ndarray, cand: np.ndarray, prob: float) -> np.ndarray:
    """Smallest epsilon with max over candidates of mean_b(gap <= eps) >= prob.

    gaps (R, B2, m) (gap of each decision to the best candidate on each subsample),
    cand (R, m) bool -> (R,)."""
    B2 = gaps.shape[1]
    q = max(int(np.ceil(prob * B2 - 1e-12)), 1) - 1          # 0-based order statistic
    g = np.where(cand[:, None, :], gaps, np.inf)
    kth = np.partition(g, q, axis=1)[:, q, :]                  # (R, m)
    return kth.min(axis=1)


def gaps_to_best(sums: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Subsample objective sums (R, B2, m) -> gap of each decision to the best candidate."""
    g = np.where(cand[:, None, :], sums, np.inf)
    return g - g.min(axis=2, keepdims=True)


def rove_vote(phase1_votes: np.ndarray, gaps_vote: np.ndarray, gaps_eps: np.ndarray,
              m: int, prob: float, k2: int) -> np.ndarray:
    """ROVE's output per replication.

    phase1_votes (R, B1): SAA solutions of phase I; gaps_vote (R, B2, m): gaps (of subsample
    *sums*) on the voting subsamples; gaps_eps: the ones epsilon is chosen on (the same array
    for ROVE, the first half's for ROVEs). Epsilon is on the mean objective, as in the
    official code, hence the division by k2."""
    B1 = phase1_votes.shape[1]
    cand = vote_counts(phase1_votes, m) > 0
    eps = auto_epsilon(gaps_eps / k2, cand, prob)
    ok = (gaps_vote / k2 <= eps[:, None, None] + 1e-12) & cand[:, None, :]
    freq = ok.sum(axis=1)                                       # (R, m)
    score = np.where(cand, freq * (B1 + 1) - _first_pos(phase1_votes, m), -1)
    return score.argmax(axis=1)


def run_all(costs: np.ndarray, rng: np.random.Generator, k: int, B: int, k1: int, k2: int,
            B1: int, B2: int, prob: float, with_roves: bool) -> dict[str, np.ndarray]:
    """Every method's chosen decision (or, for bagging, the simplex point) on a batch.

    costs (R, n, m). MoVE and ROVE's phase I share their subsamples when (k, B) == (k1, B1)
    (same distribution; it saves a third of the work); everything else draws fresh ones."""
    R, n, m = costs.shape
    out: dict[str, np.ndarray] = {"base": saa(costs)}
    votes = subsample_sums(costs, rng, k, B).argmin(axis=2)
    out["move"] = move(votes, m)
    out["bagging"] = vote_counts(votes, m) / B
    ph1 = votes if (k, B) == (k1, B1) else subsample_sums(costs, rng, k1, B1).argmin(axis=2)
    cand = vote_counts(ph1, m) > 0
    gaps = gaps_to_best(subsample_sums(costs, rng, k2, B2), cand)
    out["rove"] = rove_vote(ph1, gaps, gaps, m, prob, k2)
    if with_roves:
        n1 = n // 2
        s1, s2 = costs[:, :n1], costs[:, n1:]
        v1 = subsample_sums(s1, rng, k1, B1).argmin(axis=2)
        c1 = vote_counts(v1, m) > 0
        g2 = gaps_to_best(subsample_sums(s2, rng, k2, B2), c1)
        g1 = gaps_to_best(subsample_sums(s1, rng, k2, B2), c1)
        out["roves"] = rove_vote(v1, g2, g1, m, prob, k2)
    return out


def uniform_subsets(rng: np.random.Generator, n: int, k: int, size: int) -> np.ndarray:
    """``size`` independent uniform k-subsets of range(n), shape (size, k): the k smallest of n
    uniform keys per row (O(n) a row, where :func:`floyd_subsets` is O(k^2): for large k)."""
    if not 1 <= k <= n:
        raise ValueError(f"subsample size k={k} must be in [1, n={n}]")
    if k == n:
        return np.broadcast_to(np.arange(n), (size, n)).copy()
    return np.argpartition(rng.random((size, n)), k - 1, axis=1)[:, :k]


def bag_size(n: int, fraction: float, k_min: int) -> int:
    """The tuned bagging-average's subsample size at sample size n: round(fraction * n), at least
    k_min (the vote ensembles' k) and at most n."""
    return int(min(n, max(k_min, round(fraction * n))))


def bagging_tuned(costs: np.ndarray, rng: np.random.Generator, k: int, B: int, chunk: int = 50) -> np.ndarray:
    """The bagging-average with its own subsample size: the mean of the SAA solutions of B
    k-subsamples of each replication, a point of the simplex (vote frequencies), (R, m).

    The variance-reduction ensemble the paper argues against (abstract: tail enhancement "is
    stronger than variance reduction"): the same subsample-and-aggregate scheme as MoVE with the
    mode (the paper's contribution) replaced by the average, and k tuned for averaging. Subsets
    are drawn ``chunk`` subsamples at a time (memory)."""
    R, n, m = costs.shape
    flat = costs.reshape(R * n, m)
    counts = np.zeros((R, m))
    for b0 in range(0, B, chunk):
        b = min(chunk, B - b0)
        idx = uniform_subsets(rng, n, k, R * b).reshape(R, b, k)
        rows = (np.arange(R) * n)[:, None, None] + idx
        counts += vote_counts(flat[rows].sum(axis=2).argmin(axis=2), m)
    return counts / B
