"""The policy-gradient maths: projections, gradients against finite differences, the NPG
closed form, the alternation order, the sampled estimator's mean, and the regularized fixed
point against OpenSpiel's own dilated-entropy solver (MMD, arXiv 2206.05825)."""
from __future__ import annotations

import numpy as np
import pytest

from stages.efg_altpg import algorithms as al
from stages.efg_altpg.prepare import random_policies
from stages.efg_altpg.seqform import openspiel_exploitability, to_tabular_policy


def _bisect_projection(w, floor):
    lo, hi = -20.0, 20.0
    for _ in range(200):
        m = 0.5 * (lo + hi)
        if np.maximum(w - m, floor).sum() > 1:
            lo = m
        else:
            hi = m
    return np.maximum(w - lo, floor)


@pytest.mark.parametrize("floor", [1e-3, 0.05])
def test_projection_matches_bisection(leduc, floor):
    """Leduc has 2- and 3-action infosets: both code paths against a bisection on the shift."""
    _, sf = leduc
    t = sf.trees[1]
    v = np.random.default_rng(0).normal(scale=2.0, size=t.n_seq)
    p = al.project_blocks(t, v, floor)
    assert p[1:].min() >= floor - 1e-15
    np.testing.assert_allclose(t.block_sum(p), 1.0, atol=1e-12)
    for i in range(0, t.n_inf, 7):
        s, n = t.start[i], t.nact[i]
        np.testing.assert_allclose(p[s:s + n], _bisect_projection(v[s:s + n], floor), atol=1e-10)


def test_block_softmax_normalised(leduc):
    _, sf = leduc
    t = sf.trees[0]
    pi = al.block_softmax(t, np.random.default_rng(1).normal(scale=30.0, size=t.n_seq))
    np.testing.assert_allclose(t.block_sum(pi), 1.0, atol=1e-12)
    assert pi[0] == 1.0 and np.all(pi >= 0)


def _utility(t, g, pi, tau):
    return al.soft_values(t, g, pi, tau)[2]


@pytest.mark.parametrize("tau", [0.0, 0.05])
def test_gradients_match_finite_differences(kuhn, tau):
    """dU/dpi (direct) and dU/dtheta (softmax), U = x.g - tau psi(x), against central
    differences; U itself against x.g - tau * dilated entropy computed directly."""
    _, sf = kuhn
    rng = np.random.default_rng(2)
    t = sf.trees[0]
    g = rng.normal(size=t.n_seq)
    theta = rng.normal(size=t.n_seq)
    pi = al.block_softmax(t, theta)
    x = t.reach(pi)
    psi = sum(x[t.parent[i]] * (pi[t.start[i]:t.start[i] + t.nact[i]] *
                                np.log(pi[t.start[i]:t.start[i] + t.nact[i]])).sum() for i in range(t.n_inf))
    assert _utility(t, g, pi, tau) == pytest.approx(x @ g - tau * psi, abs=1e-12)
    qt, v, _ = al.soft_values(t, g, pi, tau)
    xpar = x[t.seq_parent]
    h = 1e-6
    # softmax: d/dtheta
    adv = qt.copy()
    adv[1:] -= v[t.seq_inf[1:]]
    grad_theta = xpar * pi * adv
    for s in range(1, t.n_seq):
        e = np.zeros(t.n_seq)
        e[s] = h
        fd = (_utility(t, g, al.block_softmax(t, theta + e), tau)
              - _utility(t, g, al.block_softmax(t, theta - e), tau)) / (2 * h)
        assert grad_theta[s] == pytest.approx(fd, abs=1e-7)
    # direct: d/dpi(a|I), each probability moved on its own (U is defined off the simplex too)
    grad_pi = xpar * (qt - tau)
    for s in range(1, t.n_seq):
        e = np.zeros(t.n_seq)
        e[s] = h
        fd = (_utility(t, g, pi + e, tau) - _utility(t, g, pi - e, tau)) / (2 * h)
        assert grad_pi[s] == pytest.approx(fd, abs=1e-7)


def test_npg_step_closed_form(kuhn):
    """One NPG step: pi' ∝ pi^(1 - eta tau) * exp(eta * Q), Q the unregularized part of Qt."""
    _, sf = kuhn
    t = sf.trees[0]
    rng = np.random.default_rng(3)
    lr = al.Learner.start(t, "npg", 0.1, 0.5, 1e-3, rng, 1.0)      # a batch of one run
    g = rng.normal(size=t.n_seq)
    pi0 = lr.pi[:, 0].copy()
    qt, _, _ = al.soft_values(t, g, pi0, 0.1)
    q = qt + 0.1 * np.log(pi0)
    lr.step(g)
    want = pi0 ** (1 - 0.5 * 0.1) * np.exp(0.5 * q)
    want[0] = 1.0
    want[1:] /= t.block_sum(want)[t.seq_inf[1:]]
    assert lr.pi.shape == (t.n_seq, 1)
    np.testing.assert_allclose(lr.pi[:, 0], want, atol=1e-12)


def test_alternation_player_1_sees_new_policy(kuhn):
    """run(..., iterations=1) = player 0 steps against y0, then player 1 against the NEW x1."""
    _, sf = kuhn
    res = al.run(sf, "softmax", 0.01, 1.0, 1, np.random.default_rng(4), eval_every=1)
    rng = np.random.default_rng(4)
    p0 = al.Learner.start(sf.trees[0], "softmax", 0.01, 1.0, 1e-3, rng, 1.0)
    p1 = al.Learner.start(sf.trees[1], "softmax", 0.01, 1.0, 1e-3, rng, 1.0)
    p0.step(sf.A @ p1.x)
    p1.step(-(sf.AT @ p0.x))
    np.testing.assert_allclose(res.pis[0], p0.pi[:, 0], atol=1e-15)
    np.testing.assert_allclose(res.pis[1], p1.pi[:, 0], atol=1e-15)


@pytest.mark.parametrize("player", [0, 1])
def test_sampled_payoffs_are_unbiased(kuhn, player):
    """The mean of many sampled estimates is within 5 standard errors of A y (or -A^T x)."""
    _, sf = kuhn
    (pi0, pi1), = random_policies(sf, np.random.default_rng(5), 1)
    x, y = sf.trees[0].reach(pi0), sf.trees[1].reach(pi1)
    rng = np.random.default_rng(6)
    draws = np.array([al.sample_payoffs(sf, x, y, player, 200, rng) for _ in range(3000)])
    exact = sf.A @ y if player == 0 else -(sf.AT @ x)
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - exact) <= 5 * se + 1e-12)


def test_fixed_point_is_openspiel_mmd_qre(kuhn):
    """All three regularized variants converge to the same point as OpenSpiel's magnetic
    mirror descent with dilated entropy (alpha = tau): the unique regularized equilibrium."""
    from open_spiel.python.algorithms import mmd_dilated

    game, sf = kuhn
    tau = 0.1
    mmd = mmd_dilated.MMDDilatedEnt(game, alpha=tau)
    for _ in range(300):
        mmd.update_sequences()
    ref = mmd.get_policies().action_probability_array
    for variant, eta, iters in (("npg", 1.0, 1500), ("softmax", 2.0, 3000), ("direct", 0.3, 3000)):
        res = al.run(sf, variant, tau, eta, iters, np.random.default_rng(7), floor=1e-6, eval_every=iters)
        got = to_tabular_policy(game, sf, res.pis).action_probability_array
        assert np.abs(got - ref).max() < 1e-6, variant


def test_regularized_last_iterate_kuhn_small(kuhn):
    """A short version of the must check: tau = 0.01, 1000 rounds, OpenSpiel's exploitability."""
    game, sf = kuhn
    for variant, eta in (("npg", 1.0), ("softmax", 2.0), ("direct", 1.0)):
        res = al.run(sf, variant, 0.01, eta, 1000, np.random.default_rng(8), eval_every=50)
        assert openspiel_exploitability(game, sf, res.pis) < 0.05, variant
        assert res.expl[-1] == pytest.approx(openspiel_exploitability(game, sf, res.pis), abs=1e-12)


def test_unknown_parametrisation(kuhn):
    _, sf = kuhn
    with pytest.raises(ValueError, match="parametrisation 'adam'"):
        al.Learner.start(sf.trees[0], "adam", 0.01, 1.0, 1e-3, np.random.default_rng(0), 1.0)
