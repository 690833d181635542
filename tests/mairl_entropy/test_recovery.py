"""Reward recovery: identification up to shaping, sampling, estimation."""
from __future__ import annotations

import numpy as np
import pytest

from stages.mairl_entropy import qre, recovery as rec
from stages.mairl_entropy.games import PENNIES


@pytest.fixture(scope="module")
def game_and_qre(small_games):
    g = small_games[2]
    res = qre.solve_qre(g, 1.0, *qre.uniform_policies(g))
    return g, res.pi1[0], res.pi2[0]


def test_canonical_reward_is_tau_log_pi_at_the_qre(game_and_qre):
    g, pi1, pi2 = game_and_qre
    for tau_pi in (1.0,):
        r1, r2 = rec.normalised_reward(g, pi1, pi2, tau_pi)
        assert np.abs(r1 - np.log(pi1)).max() < 1e-12 and np.abs(r2 - np.log(pi2)).max() < 1e-12


def test_shaped_and_opponent_mean_zero_rewards_share_the_qre(game_and_qre, rng):
    """R' = rbar + V(s) - gamma E[V(s')|s, a] + xi, with xi averaging to 0 against the other's
    policy, has the same QRE (the identification statement of recovery.py)."""
    g, pi1, pi2 = game_and_qre
    S = g.shape[0]
    R = np.zeros_like(g.R)
    V = rng.normal(size=(2, S))
    xi = rng.normal(size=(2, S, 2, 2))
    xi[0] -= (xi[0] * pi2[:, None, :]).sum(axis=2, keepdims=True)     # E_{a2 ~ pi2} xi_1 = 0
    xi[1] -= (xi[1] * pi1[:, :, None]).sum(axis=1, keepdims=True)     # E_{a1 ~ pi1} xi_2 = 0
    R[0] = np.log(pi1)[:, :, None] + V[0][:, None, None] - g.gamma * g.P @ V[0] + xi[0]
    R[1] = np.log(pi2)[:, None, :] + V[1][:, None, None] - g.gamma * g.P @ V[1] + xi[1]
    res = qre.solve_qre(g, 1.0, *qre.random_policies(g, 8, rng, 0.5), R=R)
    assert res.converged.all()
    assert np.abs(res.pi1 - pi1).max() < 1e-10 and np.abs(res.pi2 - pi2).max() < 1e-10


def test_recovered_reward_rationalises_the_estimate(game_and_qre, rng):
    g, pi1, pi2 = game_and_qre
    counts = rec.sample_counts(rng, g, pi1, pi2, 500, 5, "generative")
    e = rec.recovery_errors(g, 1.0, pi1, pi2, counts, 0.5, {})
    assert e["converged"].all() and e["rationalised"].max() < 1e-10
    assert np.all(e["reward_error"] > 0) and np.all(e["nash_gap"] >= -1e-12)


def test_exact_policies_give_zero_errors(game_and_qre):
    """Counts proportional to the QRE with a huge n and tiny smoothing: errors ~ 0."""
    g, pi1, pi2 = game_and_qre
    counts = (1e12 * pi1[:, :, None] * pi2[:, None, :])[None]
    e = rec.recovery_errors(g, 1.0, pi1, pi2, counts, 1e-9, {})
    assert e["reward_error"][0] < 1e-9 and e["value_gap"][0] < 1e-9 and e["nash_gap"][0] < 1e-12


def test_sampling_counts(game_and_qre, rng):
    g, pi1, pi2 = game_and_qre
    gen = rec.sample_counts(rng, g, pi1, pi2, 1001, 4, "generative")
    assert gen.shape == (4, 3, 2, 2)
    assert (gen.sum(axis=(2, 3)) == np.array([334, 334, 333])).all()
    occ = rec.sample_counts(rng, g, pi1, pi2, 1001, 4, "occupancy")
    assert (occ.sum(axis=(1, 2, 3)) == 1001).all()
    with pytest.raises(ValueError, match="sampling must be one of"):
        rec.sample_counts(rng, g, pi1, pi2, 10, 1, "trajectories")


def test_occupancy_is_the_discounted_visit_distribution(game_and_qre):
    g, pi1, pi2 = game_and_qre
    d = rec.occupancy(g, pi1[None], pi2[None])[0]
    P_pi = np.einsum("sxyt,sx,sy->st", g.P, pi1, pi2)
    series, mu = np.zeros_like(d), g.mu0.copy()
    for t in range(800):
        series += (1 - g.gamma) * g.gamma ** t * mu
        mu = mu @ P_pi
    assert abs(d.sum() - 1) < 1e-12 and np.abs(d - series).max() < 1e-12


def test_smoothed_estimates_by_hand():
    counts = np.array([[[[3, 1], [0, 0]]]])          # one state: a1 = 0 four times, a2 = 0 three times
    p1, p2 = rec.estimate_policies(counts, 0.5)
    assert np.allclose(p1[0, 0], [4.5 / 5, 0.5 / 5]) and np.allclose(p2[0, 0], [3.5 / 5, 1.5 / 5])


def test_n_grid():
    assert rec.n_grid(100, 100000, 4).tolist() == [100, 178, 316, 562, 1000, 1778, 3162, 5623, 10000,
                                                   17783, 31623, 56234, 100000]


def test_reward_parts_rebuild_the_true_reward(game_and_qre):
    """R_i = tau log pi_i + shaping_i + xi_i, with xi_i averaging to 0 against the other's policy."""
    g, pi1, pi2 = game_and_qre
    p1, p2 = rec.reward_parts(g, 1.0, pi1, pi2)
    assert np.abs(np.log(pi1)[:, :, None] + p1["shaping"] + p1["xi"] - g.R[0]).max() < 1e-12
    assert np.abs(np.log(pi2)[:, None, :] + p2["shaping"] + p2["xi"] - g.R[1]).max() < 1e-12
    assert np.abs((p1["xi"] * pi2[:, None, :]).sum(axis=2)).max() < 1e-12
    assert np.abs((p2["xi"] * pi1[:, :, None]).sum(axis=1)).max() < 1e-12


def test_matched_reward_is_the_truth_at_the_truth_and_rationalises_the_estimate(game_and_qre, rng):
    g, pi1, pi2 = game_and_qre
    exact = rec.matched_reward(g, 1.0, pi1, pi2, pi1[None], pi2[None])[0]
    assert np.abs(exact - g.R).max() < 1e-12
    h1, h2 = rec.estimate_policies(rec.sample_counts(rng, g, pi1, pi2, 300, 3, "generative"), 0.5)
    R_hat = rec.matched_reward(g, 1.0, pi1, pi2, h1, h2)
    assert qre.fixed_point_residual(g, R_hat, h1, h2, 1.0).max() < 1e-12
    assert np.abs(R_hat - g.R).max() > 1e-3                       # it moved with the estimate


def test_learner_gets_the_estimate_where_the_qre_is_unique(game_and_qre, rng):
    g, pi1, pi2 = game_and_qre
    counts = rec.sample_counts(rng, g, pi1, pi2, 2000, 3, "generative")
    starts = qre.random_policies(g, 3 * 8, rng, 0.5)
    e = rec.transfer_errors(g, 1.0, pi1, pi2, counts, 0.5, starts, {})
    assert e["converged"].all() and e["from_estimate"].max() < 1e-10
    assert abs(e["distance"].max() - e["estimate_error"].max()) < 1e-10 and e["estimate_error"].max() > 0


def test_learner_can_end_at_another_qre_where_it_is_not_unique(rng):
    """The coordination game at tau = 0.5 has three QREs (uniform and two coordinated): the expert
    plays one coordinated QRE, and learners from random starts also find the other. At tau = 2 the
    QRE is unique (uniform) and every learner gets the estimate: the check can fail, and passes."""
    g = qre.matrix_game(PENNIES, PENNIES)
    near = (np.array([[[0.9, 0.1]]]), np.array([[[0.9, 0.1]]]))
    for tau, elsewhere in ((0.5, True), (2.0, False)):
        ex = qre.solve_qre(g, tau, *near)
        pi1, pi2 = ex.pi1[0], ex.pi2[0]
        counts = (1e6 * pi1[:, :, None] * pi2[:, None, :]).round()[None]
        e = rec.transfer_errors(g, tau, pi1, pi2, counts, 0.5, qre.random_policies(g, 32, rng, 0.5), {})
        assert e["estimate_error"].max() < 1e-5
        assert bool(e["distance"].max() > 0.5) == elsewhere
        assert bool(e["from_estimate"].max() > 1e-6) == elsewhere


def _reward_error_slope(g, pi1, pi2, rng, state_map):
    """Log-log slope over n of the mean worst-case error of tau log pihat (tau = 1) against the
    canonical reward, from demonstrations whose states are relabelled by ``state_map``."""
    rbar1, rbar2 = rec.normalised_reward(g, pi1, pi2, 1.0)
    ns = np.array([100, 1000, 10000, 100000])
    errs = []
    for n in ns:
        counts = rec.sample_counts(rng, g, pi1, pi2, int(n), 40, "generative")[:, state_map]
        h1, h2 = rec.estimate_policies(counts, 0.5)
        errs.append(np.maximum(np.abs(np.log(h1) - rbar1).reshape(40, -1).max(1),
                               np.abs(np.log(h2) - rbar2).reshape(40, -1).max(1)).mean())
    return float(np.polyfit(np.log(ns), np.log(errs), 1)[0])


def test_reward_error_falls_like_one_over_sqrt_n_and_not_from_the_wrong_states(game_and_qre, rng):
    """(was the ledger must reward_error_rate) The plug-in estimate's worst-case error falls with
    slope -1/2 (the delta method); demonstrations of the wrong states (a blind input) converge to
    the wrong policy, so their error does not fall."""
    g, pi1, pi2 = game_and_qre
    S = g.shape[0]
    assert -0.6 < _reward_error_slope(g, pi1, pi2, rng, np.arange(S)) < -0.4
    blind = _reward_error_slope(g, pi1, pi2, rng, np.roll(np.arange(S), 1))
    assert blind > -0.1
