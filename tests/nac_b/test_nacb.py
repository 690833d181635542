"""The vectorised NAC-B engine against a plain one-run loop written from the algorithm's
description, plus its schedule, its non-learning special case, learning and divergence."""
from __future__ import annotations

import math

import numpy as np
import pytest

from stages.nac_b import mdp as M
from stages.nac_b import nacb as N


def reference_nacb(P, r, T, B, alpha, beta, gamma, uniforms, s0=0):
    """One NAC-B run, step by step, as the module docstring states it (no vectorisation).

    ``uniforms[t]`` picks the pair (a_t, s_{t+1}) by inverting the cumulative joint law
    pi(a|s) P(s'|s, a) in the order (a, s'). Returns (total reward, final policy)."""
    S, A = r.shape
    K = max(1, math.ceil(math.sqrt(T) - 1e-9))
    H = max(1, T // (2 * K * B))
    theta, omega = np.zeros((S, A)), np.zeros((S, A))
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
        for _ in range(H):                                  # natural gradient: batched SGD
            g = np.zeros((S, A))
            for _ in range(B):
                s_, a, rew, sn, p = step()
                td = rew - eta + zeta[sn] - zeta[s_]
                psi = np.eye(A)[a] - p
                g[s_] += (omega[s_] @ psi - td) * psi
            omega -= gamma * g / B
        theta += alpha * omega                              # actor
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


def test_runs_in_a_disjoint_union_stay_in_their_block(mdp):
    other = M.make_periodic_unichain(np.random.default_rng(5), 1, 2, 2, 2, 1.0, 0.5, 0.0, 1.0)
    P, r, off = M.disjoint_union([mdp, other])
    runs = N.make_runset([500, 500], 2, 0.3, 0.3, 0.3)
    out = N.run_nacb(P, r, runs, np.random.default_rng(4), np.array([0, off[1]]), checkpoints=[500])
    assert out["reward"][1] <= 500 and np.isfinite(out["reward"]).all()
    # the block-1 run only ever learned in block 1: its policy on block 0 is still uniform
    np.testing.assert_allclose(out["policies"][0, 1, :off[1]], 0.5)
    np.testing.assert_allclose(out["policies"][0, 0, off[1]:], 0.5)
