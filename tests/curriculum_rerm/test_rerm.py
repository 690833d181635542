"""Biased ridge RERM against the library answer (sklearn Ridge on residual targets), the primal
normal equations and a 1-d case by hand; SGD against the closed form; the task sequences."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from stages.curriculum_rerm.rerm import (RIDGE_ARMS, Tasks, arm_data, biased_ridge, biased_sgd, excess_risk, make_tasks,
                                         ridge_arms, run_sequence, visit_orders)


def _problem(S=3, n=7, d=12, L=4, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((S, n, d)), rng.standard_normal((S, n)), rng.standard_normal((S, L, d)),
            np.geomspace(1e-3, 10, L))


def test_biased_ridge_matches_sklearn_ridge_on_residuals():
    """(1/2n)||Xw - y||^2 + (lam/2)||w - w_prev||^2: w = w_prev + Ridge(alpha = n lam, no intercept)
    fitted on y - X w_prev (sklearn minimises ||y - X v||^2 + alpha ||v||^2)."""
    X, y, w_prev, lams = _problem()
    got = biased_ridge(X, y, w_prev, lams)
    n = X.shape[1]
    for s in range(X.shape[0]):
        for k, lam in enumerate(lams):
            fit = Ridge(alpha=n * lam, fit_intercept=False, solver="cholesky").fit(X[s], y[s] - X[s] @ w_prev[s, k])
            np.testing.assert_allclose(got[s, k], w_prev[s, k] + fit.coef_, rtol=1e-7, atol=1e-9)


def test_biased_ridge_matches_primal_normal_equations_when_n_exceeds_d():
    X, y, w_prev, lams = _problem(n=30, d=8)
    got = biased_ridge(X, y, w_prev, lams)
    n, d = X.shape[1:]
    for s in range(X.shape[0]):
        for k, lam in enumerate(lams):
            A = X[s].T @ X[s] / n + lam * np.eye(d)
            b = X[s].T @ y[s] / n + lam * w_prev[s, k]
            np.testing.assert_allclose(got[s, k], np.linalg.solve(A, b), rtol=1e-8, atol=1e-10)


def test_one_dimensional_case_by_hand():
    # d = 1, rows x = (1, 2), y = (2, 4), w_prev = 1, lam = 1: minimise ((w-2)^2 + (2w-4)^2)/4 + (w-1)^2/2
    # -> derivative (w - 2)/2 + (2w - 4) + (w - 1) = 0 -> 3.5 w = 6 -> w = 12/7
    w = biased_ridge(np.array([[[1.0], [2.0]]]), np.array([[2.0, 4.0]]), np.array([[[1.0]]]), np.array([1.0]))
    assert w[0, 0, 0] == pytest.approx(12 / 7)


def test_large_lambda_stays_at_bias_small_lambda_interpolates():
    X, y, w_prev, _ = _problem(n=5, d=20, L=2)
    w = biased_ridge(X, y, w_prev, np.array([1e8, 1e-9]))
    np.testing.assert_allclose(w[:, 0], w_prev[:, 0], atol=1e-6)
    np.testing.assert_allclose(np.einsum("snd,sd->sn", X, w[:, 1]), y, atol=1e-5)


def test_nonpositive_lambda_refused():
    X, y, w_prev, _ = _problem(L=2)
    with pytest.raises(ValueError, match="every lambda must be > 0"):
        biased_ridge(X, y, w_prev, np.array([0.1, 0.0]))


def test_sequence_feeds_each_solution_forward():
    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((2, 3, 6, 9)), rng.standard_normal((2, 3, 6))
    lams = np.array([0.1, 1.0])
    all_w = run_sequence(X, y, lams, keep_all=True)
    w = np.zeros((2, 2, 9))
    for t in range(3):
        w = biased_ridge(X[:, t], y[:, t], w, lams)
        np.testing.assert_allclose(all_w[:, t], w)


def test_sgd_converges_to_closed_form():
    """Constant-step SGD, tail-averaged, lands within O(step) of the closed form: the gap is small
    and shrinks in proportion when the step does."""
    rng = np.random.default_rng(4)
    X, y = rng.standard_normal((3, 15, 5)), rng.standard_normal((3, 15))
    w_prev = rng.standard_normal((3, 5))
    lam = 0.5
    ref = biased_ridge(X, y, w_prev[:, None], np.array([lam]))[:, 0]
    gaps = [np.abs(biased_sgd(X, y, w_prev, lam, step=s, epochs=1000, rngs=[(np.random.default_rng(0), 3)]) - ref).max()
            for s in (0.002, 0.0005)]
    assert gaps[1] < 3e-3 and gaps[1] < gaps[0] / 2.5


def test_excess_risk_is_the_population_risk_gap():
    """||w - w*||^2 = E[(x.w - y)^2] - E[(x.w* - y)^2] for x ~ N(0, I): Monte Carlo check."""
    rng = np.random.default_rng(5)
    d = 4
    w_star, w = rng.standard_normal((1, d)), rng.standard_normal((1, 1, d))
    x = rng.standard_normal((400_000, d))
    y = x @ w_star[0] + 0.5 * rng.standard_normal(len(x))
    gap = np.mean((x @ w[0, 0] - y) ** 2) - np.mean((x @ w_star[0] - y) ** 2)
    assert excess_risk(w, w_star)[0, 0] == pytest.approx(gap, rel=0.02)


def test_tasks_share_data_and_target_and_differ_in_early_optima():
    tk = make_tasks(np.random.default_rng(6), reps=5, n_tasks=4, n=3, d=10, w_norm=10.0, noise=1.0, jitter=0.5)
    g, v = tk.optima["good"], tk.optima["violating"]
    np.testing.assert_allclose(g[:, -1], tk.w_star)
    np.testing.assert_allclose(v[:, -1], tk.w_star)
    np.testing.assert_allclose(np.linalg.norm(tk.w_star, axis=1), 10.0)
    steps = np.linalg.norm(np.diff(np.concatenate([np.zeros((5, 1, 10)), g], axis=1), axis=1), axis=2)
    assert steps.max() <= 10.0 / 4 * (1 + 2 * 0.5) + 1e-9                 # small steps: r <= (1 + 2 jitter) ||w*|| / T
    np.testing.assert_allclose(np.linalg.norm(v[:, :-1], axis=2), 10.0)
    # the final stage's rows and labels are the same in every arm (paired comparison)
    np.testing.assert_allclose(tk.labels("good")[:, -1], tk.labels("violating")[:, -1])
    np.testing.assert_allclose(tk.labels("good")[:, -1], tk.y_target[:, -1])


def test_noise_free_direct_total_recovers_w_star():
    """With T n >= d noise-free target rows and a tiny lambda, direct_total interpolates w*."""
    tk = make_tasks(np.random.default_rng(7), reps=2, n_tasks=4, n=5, d=12, w_norm=3.0, noise=0.0, jitter=0.5)
    er = ridge_arms(tk, np.array([1e-9]))
    assert er["direct_total"].max() < 1e-8
    assert (er["direct"] > 0.1).all()


def test_reversed_curriculum_is_the_good_tasks_in_reverse_order():
    tk = make_tasks(np.random.default_rng(8), reps=3, n_tasks=5, n=4, d=10, w_norm=10.0, noise=1.0, jitter=0.5)
    g, r = tk.optima["good"], tk.optima["reversed"]
    np.testing.assert_array_equal(r[:, :4], g[:, 3::-1])
    np.testing.assert_array_equal(r[:, -1], tk.w_star)
    # its first step (from w_0 = 0 to (T-1)/T w*) and its last ((1/T) w* to w*) are long: r is larger
    from stages.curriculum_rerm.train import largest_step
    assert (largest_step(r) > 2 * largest_step(g)).all()


def test_pooled_arm_is_the_good_curriculums_rows_in_one_task():
    tk = make_tasks(np.random.default_rng(9), reps=2, n_tasks=3, n=4, d=6, w_norm=5.0, noise=1.0, jitter=0.5)
    X, y = arm_data(tk, "pooled")
    assert X.shape == (2, 1, 12, 6) and y.shape == (2, 1, 12)
    np.testing.assert_array_equal(y[:, 0, 4:8], tk.labels("good")[:, 1])
    np.testing.assert_array_equal(X[:, 0, 8:], tk.X[:, 2])
    with pytest.raises(ValueError, match="unknown arm 'nope'"):
        arm_data(tk, "nope")


def test_pooled_equals_one_ridge_on_the_stacked_rows():
    """pooled = biased ridge toward 0 on all T n rows: the primal normal equations by hand."""
    tk = make_tasks(np.random.default_rng(10), reps=1, n_tasks=3, n=4, d=6, w_norm=5.0, noise=1.0, jitter=0.5)
    lam = 0.3
    er = ridge_arms(tk, np.array([lam]), arms=("pooled",))["pooled"][0, 0]
    X, y = tk.X[0].reshape(12, 6), tk.labels("good")[0].reshape(12)
    w = np.linalg.solve(X.T @ X / 12 + lam * np.eye(6), X.T @ y / 12)
    assert er == pytest.approx(((w - tk.w_star[0]) ** 2).sum(), rel=1e-10)


def test_tasks_of_several_seeds_concatenate_in_order():
    a = make_tasks(np.random.default_rng(11), 2, 3, 4, 5, 1.0, 1.0, 0.5)
    b = make_tasks(np.random.default_rng(12), 3, 3, 4, 5, 1.0, 1.0, 0.5)
    c = Tasks.concat([a, b])
    assert c.X.shape[0] == 5
    np.testing.assert_array_equal(c.optima["reversed"][2:], b.optima["reversed"])
    er = ridge_arms(c, np.array([0.1, 1.0]))
    er_b = ridge_arms(b, np.array([0.1, 1.0]))
    assert set(er) == set(RIDGE_ARMS)
    for k in RIDGE_ARMS:
        np.testing.assert_array_equal(er[k][2:], er_b[k])


def test_visit_orders_come_from_each_groups_generator():
    o = visit_orders([(np.random.default_rng(1), 2), (np.random.default_rng(2), 3)], 6)
    alone = visit_orders([(np.random.default_rng(2), 3)], 6)
    np.testing.assert_array_equal(o[2:], alone)
    assert (np.sort(o, axis=1) == np.arange(6)).all()
    X, y = np.zeros((5, 6, 2)), np.zeros((5, 6))
    with pytest.raises(ValueError, match="cover 4 of 5 batch members"):
        biased_sgd(X, y, np.zeros((5, 2)), 0.1, 0.01, 1, [(np.random.default_rng(1), 4)])
