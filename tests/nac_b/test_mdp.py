"""nac_b MDP maths against closed forms, hand-computed optima and HiGHS: stationary laws and
gains of fixed policies, J* by the LP and by relative value iteration, unichain / period checks."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from stages.nac_b import mdp as M


def tiny_periodic() -> M.MDP:
    """State 0 transient (both actions lead to 1 or 2), states 1 <-> 2 a period-2 cycle.

    r(1, .) = (0.2, 0.6), r(2, .) = (0.9, 0.1): the chain spends half its time in 1 and half
    in 2 whatever it does, so J* = (0.6 + 0.9) / 2 = 0.75 and the uniform gain is
    ((0.2 + 0.6) / 2 + (0.9 + 0.1) / 2) / 2 = 0.45, by hand.
    """
    P = np.zeros((3, 2, 3))
    P[0, 0] = [0.0, 1.0, 0.0]
    P[0, 1] = [0.5, 0.0, 0.5]
    P[1, :, 2] = 1.0
    P[2, :, 1] = 1.0
    r = np.array([[0.0, 1.0], [0.2, 0.6], [0.9, 0.1]])
    return M.MDP(P=P, r=r, phase=np.array([-1, 0, 1]), period=2)


def test_tiny_mdp_optimal_gain_by_hand():
    m = tiny_periodic()
    j_lp, x = M.optimal_gain_lp(m.P, m.r)
    rvi = M.relative_value_iteration(m.P, m.r, tau=0.5, tol=1e-13)
    assert j_lp == pytest.approx(0.75, abs=1e-12)
    assert rvi.gain == pytest.approx(0.75, abs=1e-10)
    assert rvi.gain_bracket[0] <= 0.75 + 1e-12 <= rvi.gain_bracket[1] + 2e-12
    assert list(rvi.policy[1:]) == [1, 0]                     # the better action in each phase
    assert x[0].sum() == pytest.approx(0.0, abs=1e-12)         # the transient state has no mass
    assert x[1, 1] == pytest.approx(0.5) and x[2, 0] == pytest.approx(0.5)
    uniform = np.full((3, 2), 0.5)
    assert M.policy_gain(m.P, m.r, uniform) == pytest.approx(0.45, abs=1e-12)


def test_two_state_chain_stationary_law_closed_form():
    """P_pi = [[1-p, p], [q, 1-q]] behind a transient state: mu = (0, q, p) / (p + q)."""
    p, q = 0.3, 0.05
    P = np.zeros((3, 1, 3))
    P[0, 0] = [0.4, 0.3, 0.3]
    P[1, 0] = [0.0, 1 - p, p]
    P[2, 0] = [0.0, q, 1 - q]
    r = np.array([[5.0], [1.0], [0.0]])
    pi = np.ones((3, 1))
    mu = M.stationary_distribution(P, pi)
    np.testing.assert_allclose(mu, [0.0, q / (p + q), p / (p + q)], atol=1e-14)
    assert M.policy_gain(P, r, pi) == pytest.approx(q / (p + q), abs=1e-14)


def test_periodic_cycle_stationary_law_is_uniform():
    """A deterministic 3-cycle: mu uniform, gain = mean reward (the chain never mixes, mu still exists)."""
    P = np.zeros((3, 1, 3))
    for s in range(3):
        P[s, 0, (s + 1) % 3] = 1.0
    r = np.array([[0.9], [0.0], [0.3]])
    np.testing.assert_allclose(M.stationary_distribution(P, np.ones((3, 1))), [1 / 3] * 3, atol=1e-14)
    assert M.policy_gain(P, r, np.ones((3, 1))) == pytest.approx(0.4, abs=1e-14)


def test_batched_policy_gain_matches_one_by_one():
    m = M.make_periodic_unichain(np.random.default_rng(3), 2, 3, 2, 3, 1.0, 0.5, 0.5, 0.5)
    pis = np.random.default_rng(4).dirichlet(np.ones(3), size=(5, m.n_states))
    batch = M.policy_gain(m.P, m.r, pis)
    assert batch.shape == (5,)
    np.testing.assert_allclose(batch, [M.policy_gain(m.P, m.r, p) for p in pis], atol=1e-14)


@pytest.mark.parametrize("seed,period,m_per,A", [(0, 2, 2, 2), (1, 3, 2, 2), (2, 4, 1, 3)])
def test_lp_equals_best_deterministic_policy_and_rvi(seed, period, m_per, A):
    """J* from HiGHS = max over all deterministic policies of the exact gain = RVI's J*."""
    m = M.make_periodic_unichain(np.random.default_rng(seed), 2, period, m_per, A, 1.0, 0.5, 0.4, 0.6)
    j_lp, _ = M.optimal_gain_lp(m.P, m.r)
    brute = max(M.policy_gain(m.P, m.r, M.deterministic(np.array(acts), A))
                for acts in itertools.product(range(A), repeat=m.n_states))
    rvi = M.relative_value_iteration(m.P, m.r)
    assert j_lp == pytest.approx(brute, abs=1e-10)
    assert rvi.gain == pytest.approx(j_lp, abs=1e-9)
    assert M.policy_gain(m.P, m.r, M.deterministic(rvi.policy, A)) == pytest.approx(j_lp, abs=1e-9)


def test_rvi_bias_solves_the_poisson_equation():
    """J* + h(s) = max_a r(s,a) + P h (s): the average-reward optimality equation of the original MDP."""
    m = M.make_periodic_unichain(np.random.default_rng(5), 2, 2, 2, 2, 1.0, 0.5, 0.0, 1.0)
    rvi = M.relative_value_iteration(m.P, m.r, tol=1e-13)
    rhs = (m.r + m.P @ rvi.bias).max(axis=1)
    np.testing.assert_allclose(rvi.gain + rvi.bias, rhs, atol=1e-9)


def test_rvi_rejects_bad_tau():
    m = tiny_periodic()
    with pytest.raises(ValueError, match=r"tau must be in \(0, 1\), got 1.0"):
        M.relative_value_iteration(m.P, m.r, tau=1.0)


@pytest.mark.parametrize("period", [2, 3, 4])
def test_generator_is_unichain_with_exact_period(period):
    m = M.make_periodic_unichain(np.random.default_rng(period), 2, period, 2, 2, 1.0, 0.5, 0.7, 0.3)
    assert m.n_states == 2 + 2 * period and m.n_transient == 2
    np.testing.assert_allclose(m.P.sum(axis=2), 1.0, atol=1e-12)
    assert m.r.min() >= 0 and m.r.max() <= 1
    rep = M.structure_report(m)
    assert rep["all_deterministic_checked"] and rep["not_unichain"] == 0
    assert rep["periods"] == [period]


def test_phase_rewards_alternate_and_control_shares_the_draw():
    on = M.make_periodic_unichain(np.random.default_rng(9), 2, 4, 2, 2, 1.0, 0.5, 0.7, 0.3)
    off = M.make_periodic_unichain(np.random.default_rng(9), 2, 4, 2, 2, 1.0, 0.5, 0.0, 0.3)
    np.testing.assert_array_equal(on.P, off.P)
    diff = on.r - off.r
    np.testing.assert_allclose(diff[on.phase == 0], 0.7)
    np.testing.assert_allclose(diff[on.phase == 1], 0.0)
    np.testing.assert_allclose(diff[on.phase == 2], 0.7)
    np.testing.assert_allclose(diff[on.phase < 0], 0.0)
    # every policy spends half its recurrent time in even phases: J* differs by exactly 0.35
    assert M.optimal_gain_lp(on.P, on.r)[0] - M.optimal_gain_lp(off.P, off.r)[0] == pytest.approx(0.35, abs=1e-9)


def test_generator_rejects_rewards_above_one():
    with pytest.raises(ValueError, match="phase_amplitude \\+ action_reward_scale must be <= 1"):
        M.make_periodic_unichain(np.random.default_rng(0), 1, 2, 1, 2, 1.0, 0.5, 0.8, 0.3)


def test_structure_helpers_on_known_chains():
    # two absorbing states: two recurrent classes
    P = np.array([[0.5, 0.25, 0.25], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert M.recurrent_classes(P) == [[1], [2]]
    cyc = np.roll(np.eye(5), 1, axis=1)                       # 0 -> 1 -> ... -> 4 -> 0
    assert M.recurrent_classes(cyc) == [[0, 1, 2, 3, 4]]
    assert M.chain_period(cyc, [0, 1, 2, 3, 4]) == 5
    lazy = 0.5 * cyc + 0.5 * np.eye(5)
    assert M.chain_period(lazy, [0, 1, 2, 3, 4]) == 1
    # cycles of lengths 2 and 3 through state 0: gcd 1
    P = np.zeros((4, 4))
    P[0, 1] = P[0, 2] = 0.5
    P[1, 0] = 1.0
    P[2, 3] = 1.0
    P[3, 0] = 1.0
    assert M.chain_period(P, [0, 1, 2, 3]) == 1



@pytest.mark.parametrize("seed", [1000, 1001])
def test_prepares_mdps_are_unichain_periodic_and_lp_matches_rvi(real_params, seed):
    """What the retired musts mdps_unichain_periodic and optimal_gain_lp_matches_rvi read, as a
    test of the code: prepare's three MDPs of a seed (default profile), every deterministic
    policy checked, and J* from HiGHS = RVI's = the gain of RVI's greedy policy."""
    from stages.common.runtime.params import load_study
    from stages.nac_b.params import NacBParams
    from stages.nac_b.prepare import NAMES, build_mdps, references, seed_metrics

    _, p = load_study("nac_b", NacBParams, real_params, profile="default")
    mdps = build_mdps(p.prepare, seed)
    out = {k: references(mdps[k], p.prepare) for k in NAMES}
    assert all(o["structure"]["all_deterministic_checked"] for o in out.values())
    m = seed_metrics(out)
    assert m["structure_violations"] == 0 and m["policies_checked"] == 2 ** 6 + 2 * 2 ** 10 + 3
    assert m["gain"]["lp_vs_rvi_max_abs_diff"] < 1e-8 and m["gain"]["optimal_policy_gap_max"] < 1e-8
    assert [out[k]["period"] for k in NAMES] == [2, 4, 4]
    assert out["batching"]["J_star"] - out["control"]["J_star"] == pytest.approx(0.35, abs=1e-9)


def test_a_broken_generator_would_be_seen():
    """The structure check can fail: an absorbing recurrent state breaks unichain and period."""
    m = tiny_periodic()
    P = m.P.copy()
    P[1, 0] = [0.0, 1.0, 0.0]                      # action 0 in state 1 stays: a second closed class
    rep = M.structure_report(M.MDP(P=P, r=m.r, phase=m.phase, period=2))
    assert rep["not_unichain"] > 0 or rep["periods"] != [2]
