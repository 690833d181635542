"""Finite-horizon constrained MDPs: the official generators, exact evaluation, the exact optimum.

A CMDP here has horizon H, S states, A actions, a feature map phi (S*A x d) with transitions
P[h, s, a, s'], reward r[h, s, a] and utility u[h, s, a] in [0, 1], a start distribution mu
and a threshold b; a policy pi[h, s, a] is feasible when its expected total utility
V_u(pi) = E[sum_h u] >= b. This module follows matsuolab/Episode-Wise-Safe-Linear-CMDP
(envs/tabular.py, envs/linear.py, utils.py), written anew in numpy:

* :func:`tabular_cmdp` - the "random" tabular instance as a linear CMDP with one-hot features
  (d = S*A): rewards and utilities 1 with probability 0.1 (else 0), P[h, s, a] ~ Dirichlet(0.1),
  one start state drawn uniformly.
* :func:`linear_cmdp` - the linear instance: phi(s, a) ~ Dirichlet(0.1) on d coordinates,
  mu_h(., s') rows ~ Dirichlet(0.1) over S so P[h, s, a] = phi(s, a) . mu_h is a distribution,
  r = phi . theta_r and u = phi . theta_u with theta ~ U(0, 1)^(H x d), each scaled so its
  largest value is 1.
* :func:`with_threshold` - the official ``set_cmdp_info``: b = threshold_scale * max_pi V_u(pi)
  and the safe policy pi_sf = the utility-greedy (utility-maximising) deterministic policy, which
  the algorithms know in advance (its slack xi = max V_u - b > 0).

The exact optimum max {V_r(pi) : V_u(pi) >= b} is an LP over occupancy measures q[h, s, a]
solved by HiGHS (:func:`solve_occupancy_lp`); the official code approximates it by 50 000
Lagrangian subgradient steps (:func:`lagrange_optimum`, kept for the benchmark). Values of a
given policy are exact backward induction (:func:`policy_values`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True)
class CMDP:
    P: np.ndarray          # (H, S, A, S) transition kernel
    r: np.ndarray          # (H, S, A) reward in [0, 1]
    u: np.ndarray          # (H, S, A) utility in [0, 1]
    mu: np.ndarray         # (S,) start distribution
    phi: np.ndarray        # (S*A, d) features, row s*A + a
    threshold: float = 0.0  # b: feasible iff V_u(pi) >= b
    safe_policy: np.ndarray | None = None  # (H, S, A) known safe policy (utility-greedy)

    @property
    def H(self) -> int:
        return self.P.shape[0]

    @property
    def S(self) -> int:
        return self.P.shape[1]

    @property
    def A(self) -> int:
        return self.P.shape[2]

    @property
    def d(self) -> int:
        return self.phi.shape[1]


def tabular_cmdp(rng: np.random.Generator, S: int, A: int, H: int, p_nonzero: float = 0.1,
                 concentration: float = 0.1) -> CMDP:
    """The official tabular generator (envs/tabular.py) with one-hot features (d = S*A)."""
    r = (rng.random((H, S, A)) < p_nonzero).astype(float)
    u = (rng.random((H, S, A)) < p_nonzero).astype(float)
    P = rng.dirichlet(np.full(S, concentration), size=(H, S, A))
    mu = np.zeros(S)
    mu[rng.integers(S)] = 1.0
    return CMDP(P=_renormalise(P), r=r, u=u, mu=mu, phi=np.eye(S * A))


def linear_cmdp(rng: np.random.Generator, S: int, A: int, H: int, d: int,
                concentration: float = 0.1) -> CMDP:
    """The official linear generator (envs/linear.py): P = phi . mu_h, r = phi . theta_r / max."""
    phi = rng.dirichlet(np.full(d, concentration), size=S * A)             # (SA, d)
    mu_h = rng.dirichlet(np.full(S, concentration), size=(H, d))            # (H, d, S)
    P = np.einsum("kd,hds->hks", phi, mu_h).reshape(H, S, A, S)
    theta_r = rng.random((H, d))
    theta_u = rng.random((H, d))
    r = np.einsum("hd,kd->hk", theta_r, phi).reshape(H, S, A)
    u = np.einsum("hd,kd->hk", theta_u, phi).reshape(H, S, A)
    mu = np.zeros(S)
    mu[rng.integers(S)] = 1.0
    return CMDP(P=_renormalise(P), r=r / r.max(), u=u / u.max(), mu=mu, phi=phi)


def _renormalise(P: np.ndarray) -> np.ndarray:
    """Dirichlet draws with a small concentration can underflow to exact zeros; rows sum to 1."""
    P = np.maximum(P, 0.0)
    return P / P.sum(axis=-1, keepdims=True)


def greedy_policy(P: np.ndarray, reward: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """The deterministic policy maximising E[sum_h reward] (backward induction, ties to the lowest
    action); returns (policy (H, S, A), its value from every start state at h = 0 (S,), Q)."""
    H, S, A, _ = P.shape
    Q = np.zeros((H, S, A))
    V = np.zeros(S)
    for h in range(H - 1, -1, -1):
        Q[h] = reward[h] + P[h] @ V
        V = Q[h].max(axis=1)
    pol = np.zeros((H, S, A))
    idx = Q.argmax(axis=2)
    np.put_along_axis(pol, idx[..., None], 1.0, axis=2)
    return pol, V, Q


def policy_values(P: np.ndarray, pol: np.ndarray, rewards: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Exact expected totals E_pi[sum_h R_k(s_h, a_h)] by backward induction, batched.

    P (..., H, S, A, S), pol (..., H, S, A), rewards (..., K, H, S, A), mu (..., S) -> (..., K).
    Leading dims broadcast (one instance, or a batch of runs).
    """
    H = P.shape[-4]
    V = np.zeros(rewards.shape[:-4] + rewards.shape[-4:-3] + P.shape[-3:-2])  # (..., K, S)
    for h in range(H - 1, -1, -1):
        # Q_k(s, a) = R_k(h, s, a) + sum_s' P(s' | s, a) V_k(s')
        nxt = np.einsum("...sat,...kt->...ksa", P[..., h, :, :, :], V)
        Q = rewards[..., h, :, :] + nxt
        V = np.einsum("...sa,...ksa->...ks", pol[..., h, :, :], Q)
    return np.einsum("...s,...ks->...k", mu, V)


def with_threshold(m: CMDP, threshold_scale: float) -> CMDP:
    """The official ``set_cmdp_info``: b = scale * max_pi V_u(pi); pi_sf = the utility-greedy policy."""
    safe, V, _ = greedy_policy(m.P, m.u)
    max_utility = float(m.mu @ V)
    return replace(m, threshold=threshold_scale * max_utility, safe_policy=safe)


LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


@dataclass(frozen=True)
class LPSolution:
    value: float            # optimal expected reward
    utility: float          # expected utility of the optimal occupancy measure
    occupancy: np.ndarray   # (H, S, A)
    policy: np.ndarray      # (H, S, A), uniform where the occupancy is zero
    multiplier: float       # dual of the utility constraint (0 when it is slack or absent)


def occupancy_constraints(P: np.ndarray, mu: np.ndarray):
    """Flow constraints of occupancy measures as a sparse (H*S x H*S*A) matrix and right side:
    sum_a q[0, s, a] = mu(s); sum_a q[h+1, s', a] = sum_{s, a} P[h, s, a, s'] q[h, s, a]."""
    import scipy.sparse as sp

    H, S, A, _ = P.shape
    n = H * S * A
    out_rows = np.repeat(np.arange(H * S), A)                      # row (h, s) for column (h, s, a)
    cols = np.arange(n)
    in_rows = (np.arange(1, H)[:, None, None, None] * S + np.arange(S)[None, None, None, :])
    in_rows = np.broadcast_to(in_rows, (H - 1, S, A, S)).reshape(-1)   # row (h+1, s')
    in_cols = np.broadcast_to(cols[: (H - 1) * S * A].reshape(H - 1, S, A, 1), (H - 1, S, A, S)).reshape(-1)
    rows = np.concatenate([out_rows, in_rows])
    cc = np.concatenate([cols, in_cols])
    vals = np.concatenate([np.ones(n), -P[:-1].reshape(-1)])
    Aeq = sp.csr_matrix((vals, (rows, cc)), shape=(H * S, n))
    beq = np.concatenate([mu, np.zeros((H - 1) * S)])
    return Aeq, beq


def solve_occupancy_lp(P: np.ndarray, r: np.ndarray, mu: np.ndarray, u: np.ndarray | None = None,
                       threshold: float | None = None) -> LPSolution:
    """max_q sum r q  s.t.  flow(q) = mu, q >= 0  [and sum u q >= threshold], by HiGHS.

    Without ``u`` it is the unconstrained optimum. Raises when HiGHS reports anything but optimal.
    """
    from scipy.optimize import linprog

    H, S, A, _ = P.shape
    Aeq, beq = occupancy_constraints(P, mu)
    kw = {}
    if u is not None:
        kw = {"A_ub": -u.reshape(1, -1), "b_ub": np.array([-threshold])}
    # HiGHS's default feasibility tolerances (1e-7) leave V* off by ~1e-8; episodes are judged at
    # 1e-9, so the optimum is solved to 1e-10
    res = linprog(-r.reshape(-1), A_eq=Aeq, b_eq=beq, bounds=(0, None), method="highs", options=LP_OPTIONS, **kw)
    if res.status != 0:
        raise RuntimeError(f"occupancy LP not solved: {res.message}")
    q = np.maximum(res.x.reshape(H, S, A), 0.0)
    mult = float(-res.ineqlin.marginals[0]) if u is not None else 0.0
    util = float((q * u).sum()) if u is not None else float("nan")
    return LPSolution(value=float(-res.fun), utility=util, occupancy=q, policy=policy_from_occupancy(q),
                      multiplier=mult)


def policy_from_occupancy(q: np.ndarray) -> np.ndarray:
    """pi(a | s, h) = q[h, s, a] / sum_a q[h, s, a]; uniform where the state is never reached."""
    tot = q.sum(axis=-1, keepdims=True)
    A = q.shape[-1]
    return np.where(tot > 0, q / np.where(tot > 0, tot, 1.0), 1.0 / A)


def binding_gap(m: CMDP) -> tuple[float, float, LPSolution]:
    """(unconstrained optimum, constrained optimum, constrained LP solution). The constraint binds
    when the first exceeds the second: no reward-optimal policy is feasible."""
    free = solve_occupancy_lp(m.P, m.r, m.mu)
    cons = solve_occupancy_lp(m.P, m.r, m.mu, m.u, m.threshold)
    return free.value, cons.value, cons


def lagrange_optimum(m: CMDP, lr: float = 0.02, iterations: int = 50_000) -> tuple[float, float]:
    """The official ``compute_optimal_rew_util``: subgradient descent on the Lagrange multiplier
    lambda, the greedy policy of r + lambda u at each step, and the average of its occupancy
    measures; returns (average reward, average utility). Used by the benchmark only."""
    H, S, A, _ = m.P.shape
    lam = 0.0
    avg = np.zeros((H, S, A))
    for _ in range(iterations):
        pol, _, _ = greedy_policy(m.P, m.r + lam * m.u)
        occ = occupancy_measure(m.P, pol, m.mu)
        avg += occ / iterations
        lam = max(lam - lr * (float((occ * m.u).sum()) - m.threshold), 0.0)
    return float((avg * m.r).sum()), float((avg * m.u).sum())


def occupancy_measure(P: np.ndarray, pol: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """q[h, s, a] = Pr(s_h = s, a_h = a) under ``pol`` from ``mu``."""
    H, S, A, _ = P.shape
    q = np.zeros((H, S, A))
    d = mu.copy()
    for h in range(H):
        q[h] = d[:, None] * pol[h]
        d = np.einsum("sa,sat->t", q[h], P[h])
    return q
