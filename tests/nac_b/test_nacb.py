"""The vectorised NAC-B engine against a plain one-run loop written from the algorithm's
description, plus its schedule, its non-learning special case, learning and divergence."""
from __future__ import annotations

import math

import numpy as np
import pytest

from stages.nac_b import mdp as M
from stages.nac_b import nacb as N


def reference_nacb(P, r, T, B, alpha, beta, gamma, uniforms, s0=0, natural=True, theta0=None):
    """One NAC-B run, step by step, as the module docstring states it (no vectorisation).

    ``uniforms[t]`` picks the pair (a_t, s_{t+1}) by inverting the cumulative joint law
    pi(a|s) P(s'|s, a) in the order (a, s'). ``natural=False``: the plain actor-critic, whose
    actor step is alpha times the mean of A psi over the second phase. Returns (total reward,
    final policy)."""
    S, A = r.shape
    K = max(1, math.ceil(math.sqrt(T) - 1e-9))
    H = max(1, T // (2 * K * B))
    theta, omega = np.zeros((S, A)) if theta0 is None else np.array(theta0, dtype=float), np.zeros((S, A))
    eta, zeta = 0.0, np.zeros(S)
    s, t, total = s0, 0, 0.0

    def pi(s_):
        z = np.exp(theta[s_] - theta[s_].max())
        return z / z.sum()

    def step():
        nonlocal s, t, total
        p = pi(s)
        cum = np.cumsum((p[:, None] * P[s]).reshape(-1))
        cum[-1] = 1.0
        j = min(int((cum <= uniforms[t]).sum()), A * S - 1)
        a, sn = divmod(j, S)
        rew = r[s, a]
        total += rew
        t += 1
        out = (s, a, rew, sn, p)
        s = sn
        return out

    for _ in range(K):
        if t + 2 * H * B > T:
            break
        for _ in range(H):                                  # critic: batched average-reward TD(0)
            g_eta, g_zeta = 0.0, np.zeros(S)
            for _ in range(B):
                s_, a, rew, sn, _ = step()
                td = rew - eta + zeta[sn] - zeta[s_]
                g_eta += eta - rew
                g_zeta[s_] -= td
            eta -= beta * g_eta / B
            zeta -= beta * g_zeta / B
        pg = np.zeros((S, A))
        for _ in range(H):                                  # natural gradient: batched SGD
            g = np.zeros((S, A))
            for _ in range(B):
                s_, a, rew, sn, p = step()
                td = rew - eta + zeta[sn] - zeta[s_]
                psi = np.eye(A)[a] - p
                g[s_] += (omega[s_] @ psi - td) * psi
                pg[s_] += td * psi
            omega -= gamma * g / B
        theta += alpha * (omega if natural else pg / (H * B))   # actor
    while t < T:                                            # leftover steps: final policy, no learning
        step()
    pol = np.exp(theta - theta.max(axis=1, keepdims=True))
    return total, pol / pol.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def mdp():
    return M.make_periodic_unichain(np.random.default_rng(0), 2, 3, 2, 2, 1.0, 0.5, 0.6, 0.4)


def test_engine_matches_the_reference_loop(mdp):
    T = np.array([300, 517, 400, 260])
    B = np.array([1, 3, 2, 4])
    alpha = np.array([0.5, 0.3, 1.0, 0.2])
    beta = np.array([0.4, 0.3, 0.8, 1.0])
    gamma = np.array([0.3, 0.5, 0.6, 0.7])
    runs = N.make_runset(T, B, alpha, beta, gamma)
    out = N.run_nacb(mdp.P, mdp.r, runs, np.random.default_rng(7), np.zeros(4, dtype=np.int64),
                     checkpoints=[517])
    U = np.concatenate(list(N.uniform_stream(np.random.default_rng(7), 4, 517))).reshape(517, 4)
    for i in range(4):
        total, pol = reference_nacb(mdp.P, mdp.r, T[i], B[i], alpha[i], beta[i], gamma[i], U[:, i])
        assert out["reward"][i] == pytest.approx(total, abs=1e-9)
        np.testing.assert_allclose(out["policies"][0, i], pol, atol=1e-9)
    assert not out["diverged"].any()


def test_plain_actor_critic_matches_the_reference_loop(mdp):
    """Runs without the natural gradient, mixed with natural ones in one simulation."""
    T = np.array([300, 517, 400])
    B = np.array([1, 3, 2])
    alpha = np.array([5.0, 0.3, 20.0])
    natural = np.array([False, True, False])
    runs = N.make_runset(T, B, alpha, 0.4, 0.5, natural=natural)
    out = N.run_nacb(mdp.P, mdp.r, runs, np.random.default_rng(8), np.zeros(3, dtype=np.int64),
                     checkpoints=[517])
    U = np.concatenate(list(N.uniform_stream(np.random.default_rng(8), 3, 517))).reshape(517, 3)
    for i in range(3):
        total, pol = reference_nacb(mdp.P, mdp.r, T[i], B[i], alpha[i], 0.4, 0.5, U[:, i], natural=natural[i])
        assert out["reward"][i] == pytest.approx(total, abs=1e-9)
        np.testing.assert_allclose(out["policies"][0, i], pol, atol=1e-9)
    assert not np.allclose(out["policies"][0, 0], 0.5)                      # it learned something


def test_initial_logits_of_any_memory_layout_match_the_reference_loop(mdp):
    """Regression: the regret sweep builds theta0 by concatenating broadcast views, a
    non-contiguous array. The engine before the claims contract v2 then kept a stale copy of the
    policy table for the compatible features psi (reshape copied instead of viewing), so NAC-B's
    natural gradient used the initial policy throughout (the committed one-seed regret slope 0.602
    came from it). Every layout must give the reference loop's runs."""
    S, A = mdp.r.shape
    start = np.random.default_rng(11).normal(0, 0.5, (S, A))
    th0 = np.concatenate([np.broadcast_to(start, (2, S, A)), np.broadcast_to(np.zeros((S, A)), (1, S, A))])
    assert not th0.flags["C_CONTIGUOUS"]
    T = np.array([600, 600, 600])
    runs = N.make_runset(T, 2, 0.5, 0.4, 0.4)
    out = N.run_nacb(mdp.P, mdp.r, runs, np.random.default_rng(4), np.zeros(3, dtype=np.int64), theta0=th0,
                     checkpoints=[600])
    again = N.run_nacb(mdp.P, mdp.r, runs, np.random.default_rng(4), np.zeros(3, dtype=np.int64),
                       theta0=np.ascontiguousarray(th0), checkpoints=[600])
    np.testing.assert_array_equal(out["reward"], again["reward"])
    U = np.random.default_rng(4).random((600, 3))
    for i in range(3):
        total, pol = reference_nacb(mdp.P, mdp.r, 600, 2, 0.5, 0.4, 0.4, U[:, i], theta0=th0[i])
        assert out["reward"][i] == pytest.approx(total, abs=1e-9)
        np.testing.assert_allclose(out["policies"][0, i], pol, atol=1e-9)


def test_flat_view_refuses_a_copy():
    a = np.zeros((4, 3, 2))
    v = N.flat_view(a[:2], (6, 2))
    v[0, 0] = 1.0
    assert a[0, 0, 0] == 1.0
    with pytest.raises(AttributeError):
        N.flat_view(np.asfortranarray(a), (12, 2))


def test_schedule_sqrt_T_actor_steps():
    runs = N.make_runset([2000, 200000, 100], [4, 4, 1], 0.1, 0.1, 0.1)
    np.testing.assert_array_equal(runs.epochs(), [45, 448, 10])
    np.testing.assert_array_equal(runs.inner_steps(), [5, 55, 5])        # floor(T / (2 K B))


def test_runset_rejects_bad_sizes():
    with pytest.raises(ValueError, match="T and B must be >= 1"):
        N.make_runset([100, 0], 1, 0.1, 0.1, 0.1)


def test_uniform_policy_run_earns_the_uniform_gain(mdp):
    """alpha = 0: the policy stays uniform; the mean reward is J(uniform) (exact, by the LP module)."""
    R, T = 8, 20000
    runs = N.make_runset(np.full(R, T), 1, 0.0, 0.0, 0.0)
    out = N.run_nacb(mdp.P, mdp.r, runs, np.random.default_rng(1), np.zeros(R, dtype=np.int64),
                     checkpoints=[0, T])
    j_u = M.policy_gain(mdp.P, mdp.r, np.full(mdp.r.shape, 0.5))
    np.testing.assert_allclose(out["policies"], 0.5)
    assert out["reward"].mean() / T == pytest.approx(j_u, abs=0.01)
    np.testing.assert_allclose(out["curve"][-1], out["reward"])


def test_nacb_learns_near_optimal_policy(mdp):
    j_star, _ = M.optimal_gain_lp(mdp.P, mdp.r)
    j_u = M.policy_gain(mdp.P, mdp.r, np.full(mdp.r.shape, 0.5))
    runs = N.make_runset(np.full(4, 20000), 4, 0.5, 0.5, 0.5)
    out = N.run_nacb(mdp.P, mdp.r, runs, np.random.default_rng(2), np.zeros(4, dtype=np.int64),
                     checkpoints=[20000])
    gap = j_star - M.policy_gain(mdp.P, mdp.r, out["policies"][0])
    assert (gap < 0.1 * (j_star - j_u)).all()
    regret = 20000 * j_star - out["reward"]
    assert (regret < 0.25 * 20000 * (j_star - j_u)).all()


def test_huge_step_with_batch_one_is_flagged_diverged_and_stays_finite(mdp):
    runs = N.make_runset(3000, [1, 1], 50.0, 50.0, 50.0)
    out = N.run_nacb(mdp.P, mdp.r, runs, np.random.default_rng(3), np.zeros(2, dtype=np.int64), clip=1e4,
                     checkpoints=[3000])
    assert out["diverged"].all()
    assert np.isfinite(out["reward"]).all() and np.isfinite(out["policies"]).all()


def test_stacked_mdps_give_each_run_its_own_mdp(mdp):
    """Runs on a stack of MDPs (a seed dimension) earn what they earn on their MDP alone."""
    other = M.make_periodic_unichain(np.random.default_rng(5), 2, 3, 2, 2, 1.0, 0.5, 0.0, 1.0)
    runs = N.make_runset([500, 400, 500], 2, 0.3, 0.3, 0.3)
    groups = [(np.random.default_rng(1), 2), (np.random.default_rng(2), 1)]
    out = N.run_nacb(np.stack([mdp.P, other.P]), np.stack([mdp.r, other.r]), runs, groups,
                     np.zeros(3, dtype=np.int64), checkpoints=[500], mdp=np.array([0, 1, 1]))
    # runs 0 and 1 are the two columns of group 0's generator (on MDPs 0 and 1), run 2 group 1's
    U1 = np.random.default_rng(1).random((500, 2))
    total, _ = reference_nacb(mdp.P, mdp.r, 500, 2, 0.3, 0.3, 0.3, U1[:, 0])
    assert out["reward"][0] == pytest.approx(total, abs=1e-9)
    total, _ = reference_nacb(other.P, other.r, 400, 2, 0.3, 0.3, 0.3, U1[:, 1])
    assert out["reward"][1] == pytest.approx(total, abs=1e-9)
    total, pol = reference_nacb(other.P, other.r, 500, 2, 0.3, 0.3, 0.3, np.random.default_rng(2).random(500))
    assert out["reward"][2] == pytest.approx(total, abs=1e-9)
    np.testing.assert_allclose(out["policies"][0, 2], pol, atol=1e-9)
    with pytest.raises(ValueError, match="mdp must give each of the 3 runs an MDP index in"):
        N.run_nacb(np.stack([mdp.P, other.P]), np.stack([mdp.r, other.r]), runs, np.random.default_rng(0),
                   np.zeros(3, dtype=np.int64), mdp=np.array([0, 1, 2]))


def test_uniform_policy_regret_is_linear_in_T(mdp):
    """What the retired must baseline_slope read, as a test of the code: a fixed policy's regret
    is T (J* - J(pi)) + O(1), so its log-log slope over T is 1."""
    from stages.common.fits import loglog_slope

    j_star, _ = M.optimal_gain_lp(mdp.P, mdp.r)
    Ts = np.repeat([2000, 8000, 32000], 4)
    runs = N.make_runset(Ts, 1, 0.0, 0.0, 0.0)
    out = N.run_nacb(mdp.P, mdp.r, runs, np.random.default_rng(9), np.zeros(len(Ts), dtype=np.int64))
    reg = (Ts * j_star - out["reward"]).reshape(3, 4).mean(axis=1)
    slope, _ = loglog_slope([2000, 8000, 32000], reg)
    assert slope == pytest.approx(1.0, abs=0.03)
