"""The DOPE-style baseline: the extended LP (HiGHS) against the occupancy LP, warm-started
updates against fresh solves, the official Bernstein bonus."""
from __future__ import annotations

import numpy as np
import pytest

from stages.linear_cmdp.cmdp import policy_values
from stages.linear_cmdp.dope import ExtendedLP, bernstein_bonus, run_dope


def test_zero_width_extended_lp_is_the_occupancy_lp(tab_instance):
    m, v_star = tab_instance
    lp = ExtendedLP(m.H, m.S, m.A, m.mu, m.threshold)
    pol = lp.solve_fresh(m.P, np.zeros_like(m.P), m.r, m.u)
    assert lp.objective == pytest.approx(v_star, abs=1e-8)
    v = policy_values(m.P, pol, np.stack([m.r, m.u]), m.mu)
    assert v[0] == pytest.approx(v_star, abs=1e-8) and v[1] >= m.threshold - 1e-8


def test_wider_confidence_sets_are_more_optimistic(tab_instance):
    m, v_star = tab_instance
    lp = ExtendedLP(m.H, m.S, m.A, m.mu, m.threshold)
    vals = []
    for w in (0.0, 0.05, 0.2):
        lp.solve_fresh(m.P, np.full(m.P.shape, w), m.r, m.u)
        vals.append(lp.objective)
    assert vals[0] <= vals[1] + 1e-9 <= vals[2] + 2e-9 and vals[2] > v_star


def test_warm_started_updates_equal_fresh_solves(tab_instance):
    m, _ = tab_instance
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 4, size=m.P.shape).astype(float)
    lp = ExtendedLP(m.H, m.S, m.A, m.mu, m.threshold)
    P_hat, beta = bernstein_bonus(counts)
    bonus = beta.sum(-1)
    lp.load(P_hat, beta, m.r + bonus, m.u - 0.2 * bonus)
    for _ in range(15):
        for h in range(m.H):
            s, a, s2 = rng.integers(m.S), rng.integers(m.A), rng.integers(m.S)
            counts[h, s, a, s2] += 5
            p, b = bernstein_bonus(counts[h, s, a][None])
            lp.set_group(h, s, a, p[0], b[0], m.r[h, s, a] + b.sum(), m.u[h, s, a] - 0.2 * b.sum())
        warm = lp.solve()
        warm_obj = lp.objective
        P_hat, beta = bernstein_bonus(counts)
        bonus = beta.sum(-1)
        fresh = lp.solve_fresh(P_hat, beta, m.r + bonus, m.u - 0.2 * bonus)
        assert (warm is None) == (fresh is None)
        if fresh is not None:
            assert warm_obj == pytest.approx(lp.objective, abs=1e-7)


def test_bernstein_bonus_of_the_official_code():
    counts = np.zeros((1, 1, 2, 2))
    counts[0, 0, 0] = [3, 1]
    P_hat, beta = bernstein_bonus(counts)
    np.testing.assert_allclose(P_hat[0, 0, 0], [0.75, 0.25])
    np.testing.assert_allclose(beta[0, 0, 0], np.sqrt(0.75 * 0.25 / 4) + 0.25)
    np.testing.assert_allclose(P_hat[0, 0, 1], [0.5, 0.5])                 # unvisited: 1/S
    np.testing.assert_allclose(beta[0, 0, 1], np.sqrt(0.25) + 1.0)


def test_dope_run_starts_safe_and_records_exact_values(tab_instance):
    m, _ = tab_instance
    out = run_dope(m, 25, seed=3)
    assert out["safe"][0] == 1.0 and out["V_r"].shape == (25,)
    v_safe = policy_values(m.P, m.safe_policy, np.stack([m.r, m.u]), m.mu)
    assert out["V_u"][0] == pytest.approx(v_safe[1])
