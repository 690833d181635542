"""The games (ambiguity example, generator) and the log-log fit."""
from __future__ import annotations

import numpy as np
import pytest

from stages.mairl_entropy import games, qre
from stages.mairl_entropy.stats import loglog_fit


def test_generate_is_seeded_and_valid():
    a = games.generate(1, 2, 4, (2, 3), 0.9, 0.0, 1.0, 1.0, 0.5, 1.5)
    b = games.generate(1, 2, 4, (2, 3), 0.9, 0.0, 1.0, 1.0, 0.5, 1.5)
    c = games.generate(2, 2, 4, (2, 3), 0.9, 0.0, 1.0, 1.0, 0.5, 1.5)
    assert all(np.array_equal(a[k], b[k]) for k in a) and not np.array_equal(a["R"], c["R"])
    assert a["P"].shape == (2, 4, 2, 3, 4) and np.allclose(a["P"].sum(axis=-1), 1)
    assert a["R"].min() >= 0 and a["R"].max() <= 1


def test_ambiguity_pair_shares_the_nash_equilibrium_and_differs_in_nature():
    data = games.generate(0, 1, 3, (2, 2), 0.9, 0.0, 1.0, 1.0, 0.5, 1.5)
    pair = games.ambiguity_games(data["ambiguity_P"], data["ambiguity_stakes"], 0.9)
    zs, ii = pair["zero_sum"], pair["identical_interest"]
    u1, u2 = qre.uniform_policies(zs)
    for g in (zs, ii):
        assert qre.nash_gap(g, g.R, u1, u2, 0.0)[0] < 1e-12
        pure = np.zeros_like(u1)
        pure[..., 0] = 1
        assert qre.nash_gap(g, g.R, pure, u2, 0.0)[0] > 0.5
    assert games.nature(zs.R) == {"from_zero_sum": 0.0, "from_identical_interest": 2.0}
    assert games.nature(ii.R) == {"from_zero_sum": 2.0, "from_identical_interest": 0.0}


def test_loglog_fit_recovers_a_known_slope():
    rng = np.random.default_rng(0)
    n = np.array([100, 1000, 10000, 100000])
    err = 3.0 * n[None, :, None] ** -0.5 * rng.lognormal(0, 0.1, size=(2, 4, 30))
    fit = loglog_fit(n, err, 500, 0.95, np.random.default_rng(1))
    assert abs(fit["slope"] + 0.5) < 0.03 and fit["ci_low"] < fit["slope"] < fit["ci_high"]
    assert fit["ci_low"] < -0.5 < fit["ci_high"]


def _pairs():
    """The ambiguity example's two reward pairs, matrix and Markov (seed 0's stakes)."""
    data = games.generate(0, 1, 4, (2, 2), 0.9, 0.0, 1.0, 1.0, 0.5, 1.5)
    return {"matrix": {"zero_sum": qre.matrix_game(games.PENNIES, -games.PENNIES),
                       "identical_interest": qre.matrix_game(games.PENNIES, games.PENNIES)},
            "markov": games.ambiguity_games(data["ambiguity_P"], data["ambiguity_stakes"], 0.9)}


def test_matrix_pair_shares_uniform_nash_and_differs_in_nature():
    """(was the ledger must ambiguity_shared_nash / ambiguity_different_nature, matrix version)"""
    pair = _pairs()["matrix"]
    for g in pair.values():
        u1, u2 = qre.uniform_policies(g)
        assert qre.nash_gap(g, g.R, u1, u2, 0.0)[0] == 0.0
        pure = np.array([[[1.0, 0.0]]])
        assert qre.nash_gap(g, g.R, pure, u2, 0.0)[0] == 1.0      # not an equilibrium: the other gains 1
        assert qre.nash_gap(g, g.R, u1, pure, 0.0)[0] == 1.0
    assert games.nature(pair["zero_sum"].R)["from_identical_interest"] == 2.0
    assert games.nature(pair["identical_interest"].R)["from_zero_sum"] == 2.0


@pytest.mark.parametrize("tau", [0.5, 1.0, 2.0, 4.0])
def test_regularisation_keeps_this_ambiguity(tau):
    """(was the ledger should regularisation_keeps_this_ambiguity) Uniform play is the QRE of both
    rewards at every tau, and both give the same canonical reward Q_i - V_i there: QRE
    demonstrations cannot tell the zero-sum game from the common-interest one."""
    from stages.mairl_entropy.recovery import normalised_reward

    for pair in _pairs().values():
        u1, u2 = qre.uniform_policies(pair["zero_sum"])
        for g in pair.values():
            assert qre.fixed_point_residual(g, g.R, u1, u2, tau)[0] < 1e-15
        zs = normalised_reward(pair["zero_sum"], u1[0], u2[0], tau)
        ii = normalised_reward(pair["identical_interest"], u1[0], u2[0], tau)
        assert all(np.abs(x - y).max() < 1e-12 for x, y in zip(zs, ii))
    # a non-symmetric reward pair would not share it: the check can fail
    g = qre.matrix_game([[2.0, -1.0], [-1.0, 1.0]], [[1.0, -1.0], [-1.0, 1.0]])
    u1, u2 = qre.uniform_policies(g)
    assert qre.fixed_point_residual(g, g.R, u1, u2, tau)[0] > 1e-3
