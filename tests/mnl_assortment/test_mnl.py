"""The MNL maths against things known: brute force on tiny cases, the revenue-ordered optimum
without capacity, HiGHS's LP, finite differences, scipy's MLE, a known parameter."""
from __future__ import annotations

from itertools import combinations, product

import numpy as np
import pytest

from stages.mnl_assortment.mnl import (utilities, choice_probs, enumerate_assortments, fisher,
                                       highs_assortment, kappa, log_revenue, log_revenue_box_min, newton_mle,
                                       nll, nll_grad_hess, revenue, revenue_gradient_norms, sample_choices,
                                       scipy_mle)


def naive_revenue(u, r, S) -> float:
    v = np.exp([u[i] for i in S])
    return float(np.dot([r[i] for i in S], v) / (1.0 + v.sum()))


def test_enumeration_counts_and_is_distinct():
    A = enumerate_assortments(10, 4)
    assert A.shape == (385, 4)
    sets = {tuple(sorted(int(i) for i in row if i < 10)) for row in A}
    assert len(sets) == 385 and () not in sets


@pytest.mark.parametrize("n_items,capacity", [(5, 2), (6, 3), (4, 4)])
def test_enumerated_optimum_equals_brute_force(n_items, capacity):
    rng = np.random.default_rng(n_items * 10 + capacity)
    A = enumerate_assortments(n_items, capacity)
    for _ in range(20):
        u, r = rng.uniform(-2, 2, n_items), rng.uniform(0.5, 1, n_items)
        rev = revenue(u, r, A)
        brute = {S: naive_revenue(u, r, S) for k in range(1, capacity + 1) for S in combinations(range(n_items), k)}
        for j, row in enumerate(A):
            assert rev[j] == pytest.approx(brute[tuple(int(i) for i in row if i < n_items)], rel=1e-12)
        assert rev.max() == pytest.approx(max(brute.values()), rel=1e-12)


def test_uncapacitated_optimum_is_revenue_ordered():
    """Talluri & van Ryzin (2004): without a capacity the MNL optimum holds the j highest-revenue
    items for some j."""
    rng = np.random.default_rng(7)
    n = 8
    A = enumerate_assortments(n, n)
    for _ in range(50):
        u, r = rng.uniform(-2, 2, n), rng.uniform(0.1, 1, n)
        best = A[np.argmax(revenue(u, r, A))]
        S = set(int(i) for i in best if i < n)
        top = set(np.argsort(-r)[:len(S)].tolist())
        assert S == top


def test_log_revenue_is_stable_for_huge_utilities():
    A = enumerate_assortments(4, 2)
    u = np.array([1e4, 1e4 - 1.0, -1e4, 3e4])
    r = np.array([1.0, 0.5, 0.9, 0.7])
    lr = log_revenue(u, r, A)
    assert np.all(np.isfinite(lr))
    rev = dict(zip((tuple(int(i) for i in row if i < 4) for row in A), np.exp(lr)))
    # no-purchase weight vanishes: a weighted average of the revenues by softmax of u
    w = np.exp([0.0, -1.0])
    # (float resolution of utilities near 1e4 is ~2e-12)
    assert rev[(0, 1)] == pytest.approx((1.0 * w[0] + 0.5 * w[1]) / w.sum(), rel=1e-10)
    assert rev[(3,)] == pytest.approx(0.7, rel=1e-12)
    assert rev[(2,)] < 1e-300                                  # e^-1e4: buys almost surely nothing


def test_highs_lp_matches_enumeration():
    rng = np.random.default_rng(3)
    A = enumerate_assortments(10, 4)
    for _ in range(30):
        u, r = rng.uniform(-3, 3, 10), rng.uniform(0.5, 1, 10)
        val, items = highs_assortment(u, r, 4)
        rev = revenue(u, r, A)
        assert val == pytest.approx(rev.max(), abs=1e-9)
        assert naive_revenue(u, r, items.tolist()) == pytest.approx(rev.max(), abs=1e-9)
        assert 1 <= len(items) <= 4


def test_kappa_is_the_worst_case_product():
    for B, K in ((0.5, 2), (1.0, 3), (2.0, 4)):
        grid = np.linspace(-B, B, 9)
        worst = min(np.exp(ui) / (1 + np.exp(ui) + sum(np.exp(o))) ** 2
                    for ui in grid for o in product(grid, repeat=K - 1))
        assert kappa(B, K) == pytest.approx(worst, rel=1e-12)
    assert 1 / kappa(1.0, 4) == pytest.approx(246.6, abs=0.1)


def test_box_minimum_equals_brute_force_over_corners():
    rng = np.random.default_rng(11)
    A = enumerate_assortments(6, 3)
    for _ in range(20):
        u, r = rng.uniform(-2, 2, 6), rng.uniform(0.5, 1, 6)
        w = rng.uniform(0, 3, 6)
        got = np.exp(log_revenue_box_min(u - w, u + w, r, A))
        for j, row in enumerate(A):
            S = [int(i) for i in row if i < 6]
            corners = [naive_revenue({i: u[i] + s * w[i] for i, s in zip(S, sgn)}, r, S)
                       for sgn in product((-1, 1), repeat=len(S))]
            assert got[j] == pytest.approx(min(corners), rel=1e-10)
            inner = u[S] + rng.uniform(-1, 1, (50, len(S))) * w[S]
            for v in inner:
                assert naive_revenue(dict(zip(S, v)), r, S) >= got[j] - 1e-12


def _data(rng, R, n, K, d, theta):
    X = rng.standard_normal((R, n, K, d)) / np.sqrt(d)
    mask = np.ones((R, n, K), dtype=bool)
    mask[..., -1] = rng.uniform(size=(R, n)) < 0.6            # assortments of K - 1 or K items
    y = sample_choices(utilities(X, theta), mask, rng.uniform(size=(R, n)))
    return X, mask, y


def test_gradient_and_hessian_match_finite_differences():
    from scipy.optimize import approx_fprime

    rng = np.random.default_rng(5)
    X, mask, y = _data(rng, 1, 200, 4, 5, rng.standard_normal((1, 5)))
    X, mask, y = X[0], mask[0], y[0]
    th = rng.standard_normal(5)
    f, g, H = nll_grad_hess(th, X, mask, y, 0.7)
    assert f == pytest.approx(float(nll(th, X, mask, y, 0.7)))
    fd_g = approx_fprime(th, lambda t: float(nll(t, X, mask, y, 0.7)), 1e-6)
    np.testing.assert_allclose(g, fd_g, rtol=1e-5, atol=1e-4)
    fd_h = np.array([approx_fprime(th, lambda t: nll_grad_hess(t, X, mask, y, 0.7)[1][k], 1e-6) for k in range(5)])
    np.testing.assert_allclose(H, fd_h, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(H - 0.7 * np.eye(5), fisher(th, X, mask), atol=1e-10)


def test_newton_matches_scipy_and_recovers_a_known_parameter():
    rng = np.random.default_rng(9)
    theta_star = np.array([[1.0, -0.5, 0.3, 0.0, 0.8], [-1.5, 0.2, 0.9, 0.4, -0.3]])
    X, mask, y = _data(rng, 2, 20_000, 4, 5, theta_star)
    ours, iters, gnorm = newton_mle(X, mask, y, 1e-3, tol=1e-9)
    assert gnorm < 1e-9 and iters < 20
    for k in range(2):
        lib = scipy_mle(X[k], mask[k], y[k], 1e-3)
        np.testing.assert_allclose(ours[k], lib.x, atol=1e-6)
        H = fisher(ours[k], X[k], mask[k])
        err = ours[k] - theta_star[k]
        # (theta_hat - theta*)' H (theta_hat - theta*) is about chi^2_5; 20.5 is its 0.999 quantile
        assert err @ H @ err < 20.5
        assert np.linalg.norm(err) < 0.1


def test_choice_sampling_follows_the_probabilities():
    rng = np.random.default_rng(2)
    u = np.array([0.5, -1.0, 1.2, 0.0])
    mask = np.array([True, True, True, False])
    n = 200_000
    y = sample_choices(np.broadcast_to(u, (n, 4)), np.broadcast_to(mask, (n, 4)), rng.uniform(size=n))
    p = choice_probs(u, mask)
    freq = np.array([(y == k).mean() for k in range(4)])
    np.testing.assert_allclose(freq, p, atol=4e-3)
    assert (y == -1).mean() == pytest.approx(1 - p.sum(), abs=4e-3)
    assert p[3] == 0.0


def test_revenue_gradient_matches_finite_differences():
    rng = np.random.default_rng(4)
    A = enumerate_assortments(6, 3)
    x = rng.standard_normal((6, 4)) / 2
    r = rng.uniform(0.5, 1, 6)
    th = rng.standard_normal(4)
    M = np.eye(4) * 2.0 + 0.3
    rev, gnorm = revenue_gradient_norms(x @ th, r, x, M, A)
    np.testing.assert_allclose(rev, revenue(x @ th, r, A), rtol=1e-12)
    eps = 1e-6
    fd = np.stack([(revenue(x @ (th + eps * e), r, A) - revenue(x @ (th - eps * e), r, A)) / (2 * eps)
                   for e in np.eye(4)], -1)                                  # (M, d)
    want = np.sqrt(np.einsum("md,de,me->m", fd, np.linalg.inv(M), fd))
    np.testing.assert_allclose(gnorm, want, rtol=1e-6, atol=1e-9)


def test_fast_and_gather_log_revenue_agree_on_mixed_rows():
    from stages.mnl_assortment.mnl import SPREAD_FAST, _log_revenue_gather

    rng = np.random.default_rng(12)
    A = enumerate_assortments(7, 3)
    u = rng.uniform(-3, 3, (40, 7))
    u[::3] *= 500                                              # spread > SPREAD_FAST: gather path
    assert (np.ptp(np.c_[u, np.zeros(40)], axis=1) >= SPREAD_FAST).any()
    r = rng.uniform(0.5, 1.0, (40, 7))
    np.testing.assert_allclose(log_revenue(u, r, A), _log_revenue_gather(u, r, A), rtol=1e-12, atol=1e-12)
