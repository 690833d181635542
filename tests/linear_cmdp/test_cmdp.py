"""The CMDP maths: exact optimum by the HiGHS occupancy LP against hand-solved and enumerated
CMDPs, backward induction against occupancy measures, the official generators' structure."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from stages.linear_cmdp.cmdp import (CMDP, binding_gap, greedy_policy, lagrange_optimum, linear_cmdp,
                                     occupancy_measure, policy_values, solve_occupancy_lp, tabular_cmdp,
                                     with_threshold)


def test_one_step_bandit_by_hand():
    # H=1, S=1, A=2: r = (1, 0), u = (0, 1), b = 0.3. The best feasible policy plays a0 with
    # probability 0.7: V* = 0.7; the multiplier equalises r + lambda u over actions: lambda = 1.
    P = np.ones((1, 1, 2, 1))
    r = np.array([[[1.0, 0.0]]])
    u = np.array([[[0.0, 1.0]]])
    sol = solve_occupancy_lp(P, r, np.array([1.0]), u, 0.3)
    assert sol.value == pytest.approx(0.7, abs=1e-9)
    assert sol.multiplier == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(sol.policy[0, 0], [0.7, 0.3], atol=1e-9)
    assert solve_occupancy_lp(P, r, np.array([1.0])).value == pytest.approx(1.0)


def _deterministic_values(m: CMDP) -> np.ndarray:
    H, S, A = m.H, m.S, m.A
    out = []
    for acts in itertools.product(range(A), repeat=H * S):
        pol = np.zeros((H, S, A))
        pol[np.repeat(np.arange(H), S), np.tile(np.arange(S), H), list(acts)] = 1.0
        out.append(policy_values(m.P, pol, np.stack([m.r, m.u]), m.mu))
    return np.array(out)


@pytest.mark.parametrize("seed", range(6))
def test_lp_optimum_equals_enumeration_of_mixed_policies(seed):
    # With one constraint the achievable (V_r, V_u) set is the convex hull of the deterministic
    # policies' values; the optimum is a feasible vertex or a mix of a feasible and an
    # infeasible vertex on the line V_u = b.
    rng = np.random.default_rng(seed)
    H, S, A = 2, 2, 2
    m = CMDP(P=rng.dirichlet(np.ones(S), size=(H, S, A)), r=rng.random((H, S, A)), u=rng.random((H, S, A)),
             mu=rng.dirichlet(np.ones(S)), phi=np.eye(S * A))
    vals = _deterministic_values(m)
    b = float(np.quantile(vals[:, 1], 0.6))
    best = vals[vals[:, 1] >= b, 0].max()
    for i, j in itertools.product(range(len(vals)), repeat=2):
        (ri, ui), (rj, uj) = vals[i], vals[j]
        if ui >= b > uj:
            a = (b - uj) / (ui - uj)
            best = max(best, a * ri + (1 - a) * rj)
    sol = solve_occupancy_lp(m.P, m.r, m.mu, m.u, b)
    assert sol.value == pytest.approx(best, abs=1e-8)
    v = policy_values(m.P, sol.policy, np.stack([m.r, m.u]), m.mu)
    assert v[0] == pytest.approx(best, abs=1e-8) and v[1] >= b - 1e-8


def test_backward_induction_equals_occupancy_and_batches():
    rng = np.random.default_rng(3)
    m = tabular_cmdp(rng, 4, 3, 5)
    pols = rng.dirichlet(np.ones(3), size=(2, 5, 4))
    for pol in pols:
        q = occupancy_measure(m.P, pol, m.mu)
        v = policy_values(m.P, pol, np.stack([m.r, m.u]), m.mu)
        np.testing.assert_allclose(v, [(q * m.r).sum(), (q * m.u).sum()], atol=1e-12)
    batched = policy_values(np.stack([m.P] * 2), pols, np.stack([np.stack([m.r, m.u])] * 2), np.stack([m.mu] * 2))
    assert batched.shape == (2, 2)


def test_generators_follow_the_official_code():
    rng = np.random.default_rng(0)
    t = tabular_cmdp(rng, 5, 3, 4)
    assert t.phi.shape == (15, 15) and np.array_equal(t.phi, np.eye(15))
    assert set(np.unique(t.r)) <= {0.0, 1.0} and set(np.unique(t.u)) <= {0.0, 1.0}
    np.testing.assert_allclose(t.P.sum(-1), 1.0)
    assert t.mu.sum() == 1.0 and t.mu.max() == 1.0                      # one start state
    lin = linear_cmdp(rng, 5, 3, 4, 2)
    np.testing.assert_allclose(lin.P.sum(-1), 1.0)
    assert lin.r.max() == pytest.approx(1.0) and lin.u.max() == pytest.approx(1.0)
    # P, r, u are linear in the features: each lies in the span of phi's 2 columns
    for arr in (lin.P.transpose(0, 3, 1, 2).reshape(-1, 15), lin.r.reshape(4, 15), lin.u.reshape(4, 15)):
        coef, res, *_ = np.linalg.lstsq(lin.phi, arr.T, rcond=None)
        np.testing.assert_allclose(lin.phi @ coef, arr.T, atol=1e-8)


def test_threshold_and_safe_policy(tab_instance):
    m, _ = tab_instance
    _, V, _ = greedy_policy(m.P, m.u)
    max_u = float(m.mu @ V)
    assert m.threshold == pytest.approx(0.6 * max_u)
    v_safe = policy_values(m.P, m.safe_policy, np.stack([m.r, m.u]), m.mu)
    assert v_safe[1] == pytest.approx(max_u)
    assert solve_occupancy_lp(m.P, m.u, m.mu).value == pytest.approx(max_u, abs=1e-9)


def test_binding_means_reward_greedy_policy_is_infeasible(lin_instance):
    m, v_star = lin_instance
    free, cons, _ = binding_gap(m)
    assert free > cons == pytest.approx(v_star)
    greedy, _, _ = greedy_policy(m.P, m.r)
    assert policy_values(m.P, greedy, np.stack([m.r, m.u]), m.mu)[1] < m.threshold


def test_official_lagrange_method_approaches_the_lp(tab_instance):
    m, v_star = tab_instance
    r_avg, u_avg = lagrange_optimum(m, iterations=3000)
    assert abs(r_avg - v_star) < 0.05 and u_avg > m.threshold - 0.05


def test_threshold_scale_is_applied():
    m = with_threshold(tabular_cmdp(np.random.default_rng(5), 5, 3, 4), 0.5)
    m2 = with_threshold(m, 0.25)
    assert m2.threshold == pytest.approx(m.threshold / 2)


@pytest.mark.parametrize("seed", [0, 7])
def test_lp_policy_attains_v_star_on_the_generators_binding_instances(seed):
    # what the retired must optimum_lp_consistent read: on the binding instances prepare keeps, the
    # LP's own policy evaluated by backward induction gives V* (to the solver's 1e-10 tolerances,
    # within 1e-8) and meets the constraint, while the unconstrained optimum is above V* (binding)
    from stages.common.runtime.params import load_study
    from stages.linear_cmdp.params import PARAMS
    from stages.linear_cmdp.prepare import seed_instances

    _, p = load_study("linear_cmdp", PARAMS, profile="smoke")
    insts, summary = seed_instances(p.prepare, seed, log=lambda _: None)
    assert len(insts) == 4 and [r["index"] for r in insts] == [0, 1, 2, 3]
    assert summary["optimum"]["lp_vs_backward_max_abs_diff"] <= 1e-8
    assert summary["optimum"]["lp_policy_utility_margin_min"] >= -1e-8
    for r in insts:
        assert r["seed"] == seed and r["v_free"] - r["v_star"] > 1e-6          # binding
        assert abs(r["lp_policy_values"][0] - r["v_star"]) <= 1e-8
        assert r["lp_policy_values"][1] >= r["threshold"] - 1e-8
