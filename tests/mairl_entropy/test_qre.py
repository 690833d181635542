"""The QRE solver against closed forms, a hand reduction, scipy and open_spiel."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import expit

from stages.mairl_entropy import qre
from stages.mairl_entropy.baselines import qre_by_mmd, qre_by_root
from stages.mairl_entropy.games import PENNIES


@pytest.mark.parametrize("tau", [0.5, 1.0, 3.0])
def test_matching_pennies_qre_is_one_half_for_every_tau(tau, rng):
    g = qre.matrix_game(PENNIES, -PENNIES)
    res = qre.solve_qre(g, tau, *qre.random_policies(g, 8, rng, 0.5))
    assert res.converged.all()
    assert np.abs(res.pi1 - 0.5).max() < 1e-12 and np.abs(res.pi2 - 0.5).max() < 1e-12


def test_2x2_general_sum_matches_a_one_dimensional_reduction(rng):
    """By hand: p = s((R1[0]-R1[1]).q / tau), q = s((R2[:,0]-R2[:,1]).p / tau); root in p by brentq."""
    R1, R2, tau = rng.uniform(-1, 1, (2, 2)), rng.uniform(-1, 1, (2, 2)), 0.7

    def q_of(p):
        return expit(((R2[:, 0] - R2[:, 1]) @ np.array([p, 1 - p])) / tau)

    def f(p):
        q = q_of(p)
        return p - expit(((R1[0] - R1[1]) @ np.array([q, 1 - q])) / tau)

    p = brentq(f, 0.0, 1.0, xtol=1e-15)
    g = qre.matrix_game(R1, R2)
    res = qre.solve_qre(g, tau, *qre.uniform_policies(g))
    assert abs(res.pi1[0, 0, 0] - p) < 1e-10 and abs(res.pi2[0, 0, 0] - q_of(p)) < 1e-10


def test_own_action_rewards_give_the_closed_form_softmax():
    """Rewards that depend on the own action only and action-independent transitions: every
    continuation is the same after every action, so pi_i(.|s) = softmax(r_i(s, .) / tau)."""
    rng = np.random.default_rng(3)
    S, tau = 3, 0.4
    Ps = rng.dirichlet(np.ones(S), size=S)
    P = np.broadcast_to(Ps[:, None, None, :], (S, 2, 3, S)).copy()
    r1, r2 = rng.uniform(size=(S, 2)), rng.uniform(size=(S, 3))
    R = np.stack([np.broadcast_to(r1[:, :, None], (S, 2, 3)), np.broadcast_to(r2[:, None, :], (S, 2, 3))])
    g = qre.Game(P, R, 0.8, np.full(S, 1 / S))
    res = qre.solve_qre(g, tau, *qre.random_policies(g, 4, rng, 1.0))
    assert np.abs(res.pi1 - qre.softmax(r1 / tau)).max() < 1e-12
    assert np.abs(res.pi2 - qre.softmax(r2 / tau)).max() < 1e-12


def test_soft_policy_iteration_equals_soft_value_iteration(small_games, rng):
    g = small_games[0]
    pi2 = rng.dirichlet(np.ones(2), size=(2, g.shape[0]))
    r, T = qre.player_view(g, g.R, 0, pi2)
    Q_vi, V_vi, it_vi = qre.soft_response(r, T, g.gamma, 0.5, tol=1e-15)
    Q_pi, V_pi, it_pi = qre.soft_policy_iteration(r, T, g.gamma, 0.5)
    assert np.abs(V_vi - V_pi).max() < 1e-12 and np.abs(Q_vi - Q_pi).max() < 1e-12
    assert it_pi < 10 < it_vi


def test_evaluate_matches_the_discounted_series(small_games, rng):
    g, tau = small_games[1], 0.8
    pi1, pi2 = qre.random_policies(g, 1, rng, 1.0)
    V = qre.evaluate(g, g.R, pi1, pi2, tau)[0]
    P_pi = np.einsum("sxyt,sx,sy->st", g.P, pi1[0], pi2[0])
    r = np.einsum("isxy,sx,sy->is", g.R, pi1[0], pi2[0]) + tau * np.stack([qre.entropy(pi1[0]), qre.entropy(pi2[0])])
    V_series, M = np.zeros_like(r), np.eye(g.shape[0])
    for _ in range(600):
        V_series += r @ M.T
        M = g.gamma * P_pi @ M
    assert np.abs(V - V_series).max() < 1e-10


def test_unique_from_random_starts_and_gap_zero_only_at_the_qre(small_games, rng):
    for g in small_games:
        res = qre.solve_qre(g, 1.0, *qre.random_policies(g, 16, rng, 0.3))
        assert res.converged.all() and qre.max_pairwise_distance(res.pi1, res.pi2) < 1e-10
        assert qre.nash_gap(g, g.R, res.pi1[:1], res.pi2[:1], 1.0)[0] < 1e-12
        assert qre.fixed_point_residual(g, g.R, res.pi1[:1], res.pi2[:1], 1.0)[0] < 1e-12
        off1 = np.clip(res.pi1[:1] + 0.1 * np.array([1.0, -1.0]), 0, 1)
        assert qre.nash_gap(g, g.R, off1, res.pi2[:1], 1.0)[0] > 1e-4


def test_markov_qre_matches_scipy_root(small_games):
    for g in small_games:
        res = qre.solve_qre(g, 1.0, *qre.uniform_policies(g))
        b1, b2, _ = qre_by_root(g, 1.0)
        assert np.abs(b1 - res.pi1[0]).max() < 1e-10 and np.abs(b2 - res.pi2[0]).max() < 1e-10


def test_zero_sum_qre_matches_open_spiel_mmd(rng):
    A = rng.uniform(-1, 1, (3, 3))
    g = qre.matrix_game(A, -A)
    res = qre.solve_qre(g, 1.0, *qre.uniform_policies(g))
    x, y, gap = qre_by_mmd(A, 1.0, 200)
    assert abs(gap) < 1e-10
    assert np.abs(x - res.pi1[0, 0]).max() < 1e-10 and np.abs(y - res.pi2[0, 0]).max() < 1e-10


def test_coordination_game_has_several_qres_below_tau_one(rng):
    """x = tanh(y / tau), y = tanh(x / tau): two coordinated QREs besides uniform when tau < 1."""
    g = qre.matrix_game(PENNIES, PENNIES)
    res = qre.solve_qre(g, 0.5, *qre.random_policies(g, 16, rng, 0.5))
    found = qre.distinct(res.pi1[res.converged], res.pi2[res.converged], 1e-6)
    assert len(found) == 2
    x = 2 * res.pi1[res.converged][found, 0, 0] - 1
    assert np.allclose(np.abs(x), np.abs(np.tanh(x / 0.5)), atol=1e-10) and np.all(np.abs(x) > 0.9)
    u1, u2 = qre.uniform_policies(g)
    assert qre.fixed_point_residual(g, g.R, u1, u2, 0.5)[0] == 0


def test_bad_solver_arguments_are_refused(small_games):
    g = small_games[0]
    with pytest.raises(ValueError, match="tau must be > 0"):
        qre.solve_qre(g, 0.0, *qre.uniform_policies(g))
    with pytest.raises(ValueError, match="min_damping <= damping"):
        qre.solve_qre(g, 1.0, *qre.uniform_policies(g), damping=1.5)
