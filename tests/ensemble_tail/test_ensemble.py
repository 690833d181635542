"""The vectorized learners against plain-loop references written like the official
VoteEnsemble code (mickeyhqian/VoteEnsemble, VoteEnsemble.py), and the problems' closed forms."""
from __future__ import annotations

import numpy as np
import pytest

from stages.ensemble_tail import ensemble as E
from stages.ensemble_tail import problems as P


def test_floyd_subsets_distinct_and_uniform():
    rng = np.random.default_rng(0)
    n, k, size = 12, 5, 60_000
    S = E.floyd_subsets(rng, n, k, size)
    assert S.min() >= 0 and S.max() < n
    assert (np.sort(S, axis=1)[:, 1:] != np.sort(S, axis=1)[:, :-1]).all()        # no repeats in a row
    incl = np.bincount(S.ravel(), minlength=n) / size
    assert np.allclose(incl, k / n, atol=0.01)                                     # each element: k/n
    pair = ((S == 0).any(1) & (S == 1).any(1)).mean()                              # a pair: k(k-1)/(n(n-1))
    assert pair == pytest.approx(k * (k - 1) / (n * (n - 1)), abs=0.01)


def test_floyd_rejects_k_above_n():
    with pytest.raises(ValueError, match="k=5 must be in"):
        E.floyd_subsets(np.random.default_rng(0), 4, 5, 3)


def test_subsample_sums_match_explicit_gather():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3, 15, 4))
    got = E.subsample_sums(X, np.random.default_rng(7), 6, 5)
    idx = E.floyd_subsets(np.random.default_rng(7), 15, 6, 15).reshape(3, 5, 6)
    for r in range(3):
        for b in range(5):
            assert np.allclose(got[r, b], X[r, idx[r, b]].sum(axis=0))


def _move_official(votes):
    """MoVE's counting loop as in the official code: the winner is the first to reach the max."""
    pairs, max_i, max_c = [], 0, 0
    for v in votes:
        j = next((t for t, (val, _) in enumerate(pairs) if val == v), len(pairs))
        if j < len(pairs):
            pairs[j][1] += 1
        else:
            pairs.append([v, 1])
        if pairs[j][1] > max_c:
            max_i, max_c = pairs[j][0], pairs[j][1]
    return max_i


def test_move_matches_official_loop_including_ties():
    rng = np.random.default_rng(2)
    votes = rng.integers(0, 4, size=(3000, 6))                # small B: many ties
    votes[0] = [0, 1, 1, 0, 2, 3]                               # 0 and 1 tie; 1 reaches 2 first
    got = E.move(votes, 4)
    assert got[0] == 1
    assert all(got[r] == _move_official(votes[r]) for r in range(len(votes)))


def _rove_reference(ph1, sums_vote, sums_eps, k2, prob):
    """ROVE's phase II as in the official code (dedup in first-seen order, gap matrix,
    epsilon by doubling + bisection, argmax of the epsilon-optimal frequency)."""
    cands = list(dict.fromkeys(ph1.tolist()))

    def gap(s):
        ev = s[:, cands] / k2
        return ev - ev.min(axis=1, keepdims=True)

    gv, ge = gap(sums_vote), gap(sums_eps)

    def p_of(g, e):
        return (g <= e).mean(axis=0)

    if p_of(ge, 0).max() >= prob:
        eps = 0.0
    else:
        lo, hi = 0.0, 1.0
        while p_of(ge, hi).max() < prob:
            lo, hi = hi, hi * 2
        while max(hi - lo, (hi - lo) / (abs(lo) / 2 + abs(hi) / 2 + 1e-5)) > 1e-9:   # tighter than 1e-3
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if p_of(ge, mid).max() >= prob else (mid, hi)
        eps = hi
    return cands[int(np.argmax(p_of(gv, eps)))]


@pytest.mark.parametrize("split", [False, True])
def test_rove_matches_official_procedure(split):
    rng = np.random.default_rng(3 + split)
    R, B1, B2, m, k2 = 400, 7, 9, 5, 4
    ph1 = rng.integers(0, m, size=(R, B1))
    sv = rng.standard_normal((R, B2, m)) * 3
    se = rng.standard_normal((R, B2, m)) * 3 if split else sv
    cand = E.vote_counts(ph1, m) > 0
    got = E.rove_vote(ph1, E.gaps_to_best(sv, cand), E.gaps_to_best(se, cand), m, 0.5, k2)
    want = [_rove_reference(ph1[r], sv[r], se[r], k2, 0.5) for r in range(R)]
    assert (got == np.asarray(want)).mean() == 1.0


def test_auto_epsilon_is_the_smallest_that_reaches_prob():
    rng = np.random.default_rng(5)
    g = np.abs(rng.standard_normal((50, 10, 4)))
    cand = rng.random((50, 4)) < 0.7
    cand[:, 0] = True
    eps = E.auto_epsilon(g, cand, 0.5)
    ok = lambda e: (((g <= e[:, None, None]) & cand[:, None, :]).mean(axis=1)).max(axis=1) >= 0.5  # noqa: E731
    assert ok(eps).all() and not ok(eps - 1e-9).any()


def test_saa_and_bagging_on_hand_case():
    X = np.array([[[1.0, 0.0], [1.0, 3.0]]])                  # sums (2, 3): decision 0
    assert E.saa(X).tolist() == [0]
    votes = np.array([[0, 1, 1, 1]])
    assert np.allclose(E.vote_counts(votes, 2) / 4, [[0.25, 0.75]])


def test_lp_optimum_is_vertex_zero_by_highs():
    from scipy.optimize import linprog

    c = np.array([0.0, 0.6, 0.6, 1.2, 1.2])
    res = linprog(c, A_eq=np.ones((1, 5)), b_eq=[1.0], bounds=[(0, None)] * 5, method="highs")
    assert res.status == 0 and res.fun == pytest.approx(0.0) and np.allclose(res.x, np.eye(5)[0])
    assert P.true_excess("lp", c=c).tolist() == [0.0, 0.6, 0.6, 1.2, 1.2]


def test_centred_pareto_has_mean_zero_and_power_tail():
    x = P.centred_pareto(np.random.default_rng(6), 3.0, 400_000)      # a=3: finite variance for the mean test
    assert abs(x.mean()) < 0.01
    y = P.centred_pareto(np.random.default_rng(7), 1.5, 400_000) + 2.0    # back to Lomax(1.5)
    for t in (1.0, 5.0, 20.0):
        assert (y > t).mean() == pytest.approx((1 + t) ** -1.5, rel=0.05)


def test_regression_excess_is_the_squared_distance():
    dists = [0.0, 0.2, 0.4]
    beta, M = P.regression_models(3, dists)
    assert np.allclose(((M - beta) ** 2).sum(axis=1), dists)
    X = P.regression_costs(np.random.default_rng(8), beta, M, 2.1, 1, 400_000)[0]
    diff = X.mean(axis=0) - X[:, 0].mean()
    assert np.allclose(diff, dists, atol=0.03)


def test_run_all_shapes_and_reuse():
    rng = np.random.default_rng(9)
    X = P.lp_costs(rng, np.array([0.0, 0.6, 1.2]), 1.5, 20, 30)
    out = E.run_all(X, rng, 5, 11, 5, 5, 11, 13, 0.5, True)
    assert set(out) == {"base", "move", "bagging", "rove", "roves"}
    assert out["bagging"].shape == (20, 3) and np.allclose(out["bagging"].sum(axis=1), 1)
    assert all(out[m].shape == (20,) for m in ("base", "move", "rove", "roves"))
