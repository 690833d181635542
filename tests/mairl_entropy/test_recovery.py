"""Reward recovery: identification up to shaping, sampling, estimation."""
from __future__ import annotations

import numpy as np
import pytest

from stages.mairl_entropy import qre, recovery as rec


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
