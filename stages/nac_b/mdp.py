"""Finite average-reward MDPs for nac_b: a seeded generator of unichain MDPs whose recurrent
class is periodic and fed by transient states, and the exact quantities the study compares with.

An MDP is ``(P, r)`` with ``P[s, a, s']`` the transition kernel and ``r[s, a]`` in [0, 1].
States ``0 .. n_transient-1`` are transient; the others form ``period`` phases of
``states_per_phase`` states each, and every action in phase ``i`` moves to phase ``i + 1 mod
period`` with a full-support distribution over that phase's states. So under every stationary
policy the recurrent states form one closed class with period exactly ``period`` (the chain is
unichain, never ergodic), and the transient states reach it with positive probability at each
step (they are never re-entered).

Exact references:

* :func:`optimal_gain_lp` -- J* and an optimal occupancy measure from the average-reward LP
  (max r.x over occupancy measures x >= 0 with flow balance and sum x = 1), solved by HiGHS via
  ``scipy.optimize.linprog(method="highs")`` (the library answer);
* :func:`relative_value_iteration` -- our own cross-check: relative value iteration on the
  aperiodicity transform ``P_tau = tau I + (1 - tau) P`` (same gains for every policy; the
  transform makes RVI converge although P is periodic), giving J*, the bias and a greedy
  gain-optimal policy for every state, transient ones included;
* :func:`stationary_distribution` / :func:`policy_gain` -- mu_pi and J(pi) = mu_pi . r_pi of a
  (batch of) stationary policies, by a linear solve (unique for a unichain chain);
* :func:`recurrent_classes` / :func:`chain_period` -- structure checks of a policy's chain.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MDP:
    """A finite MDP with its phase layout (``phase[s] = -1`` for transient states)."""

    P: np.ndarray          # (S, A, S)
    r: np.ndarray          # (S, A)
    phase: np.ndarray      # (S,) int
    period: int

    @property
    def n_states(self) -> int:
        return self.P.shape[0]

    @property
    def n_actions(self) -> int:
        return self.P.shape[1]

    @property
    def n_transient(self) -> int:
        return int((self.phase < 0).sum())


def make_periodic_unichain(rng: np.random.Generator, n_transient: int, period: int,
                           states_per_phase: int, n_actions: int, concentration: float,
                           transient_stay: float, phase_amplitude: float,
                           action_reward_scale: float) -> MDP:
    """A random unichain MDP with ``n_transient`` transient states feeding a recurrent class of
    period ``period`` (see the module docstring).

    Transitions: from a recurrent state of phase i, each action draws its next-state law over
    phase i+1 from Dirichlet(concentration), mixed 80/20 with the uniform law (full support, so
    the period is exact). From a transient state, each action keeps a share ~U(0, transient_stay)
    of its mass on the transient states (Dirichlet) and puts the rest on the recurrent states.

    Rewards: ``phase_amplitude`` on even phases and 0 on odd ones (rewards alternating by phase;
    0 switches this off), plus ``action_reward_scale * U(0, 1)`` for every (state, action);
    transient states get the action part only.
    """
    if phase_amplitude + action_reward_scale > 1 + 1e-12:
        raise ValueError("phase_amplitude + action_reward_scale must be <= 1 (rewards in [0, 1])")
    m, S = states_per_phase, n_transient + period * states_per_phase
    phase = np.full(S, -1, dtype=np.int64)
    phase[n_transient:] = np.repeat(np.arange(period), m)
    P = np.zeros((S, n_actions, S))
    for s in range(n_transient, S):
        nxt = n_transient + ((phase[s] + 1) % period) * m
        for a in range(n_actions):
            P[s, a, nxt:nxt + m] = 0.8 * rng.dirichlet(np.full(m, concentration)) + 0.2 / m
    n_rec = S - n_transient
    for s in range(n_transient):
        for a in range(n_actions):
            stay = rng.uniform(0.0, transient_stay)
            P[s, a, :n_transient] = stay * rng.dirichlet(np.full(n_transient, concentration))
            P[s, a, n_transient:] = (1 - stay) * (0.8 * rng.dirichlet(np.full(n_rec, concentration))
                                                  + 0.2 / n_rec)
    P /= P.sum(axis=2, keepdims=True)
    base = np.where((phase >= 0) & (phase % 2 == 0), phase_amplitude, 0.0)
    r = base[:, None] + action_reward_scale * rng.uniform(size=(S, n_actions))
    return MDP(P=P, r=np.clip(r, 0.0, 1.0), phase=phase, period=period)


def policy_matrix(P: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """P_pi[..., s, s'] = sum_a pi[..., s, a] P[s, a, s'] (pi may carry leading batch axes)."""
    return np.einsum("...sa,sat->...st", pi, P)


def stationary_distribution(P: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """The stationary law mu_pi of each policy (``pi``: (..., S, A)); unique for unichain MDPs.

    Solves mu (P_pi - I) = 0 with one balance equation replaced by sum(mu) = 1.
    """
    Ppi = policy_matrix(P, pi)
    S = Ppi.shape[-1]
    M = np.swapaxes(Ppi, -1, -2) - np.eye(S)
    M[..., -1, :] = 1.0
    b = np.zeros(Ppi.shape[:-1])
    b[..., -1] = 1.0
    return np.linalg.solve(M, b[..., None])[..., 0]


def policy_gain(P: np.ndarray, r: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """J(pi) = sum_s mu_pi(s) sum_a pi(a|s) r(s, a), for a policy or a batch of them."""
    mu = stationary_distribution(P, pi)
    return np.einsum("...s,...sa,sa->...", mu, pi, r)


def optimal_gain_lp(P: np.ndarray, r: np.ndarray) -> tuple[float, np.ndarray]:
    """J* and an optimal occupancy measure x[s, a] from the average-reward LP, by HiGHS.

    max sum r(s,a) x(s,a)  s.t.  sum_a x(s',a) = sum_{s,a} P(s'|s,a) x(s,a) for every s',
    sum x = 1, x >= 0. For a unichain MDP its optimum is the optimal gain J*.
    """
    from scipy.optimize import linprog

    S, A = r.shape
    flow = np.zeros((S, S * A))
    for s in range(S):
        flow[s, s * A:(s + 1) * A] = 1.0
    flow -= P.reshape(S * A, S).T
    A_eq = np.vstack([flow, np.ones((1, S * A))])
    b_eq = np.zeros(S + 1)
    b_eq[-1] = 1.0
    res = linprog(-r.reshape(-1), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the average-reward LP: {res.message}")
    return float(-res.fun), res.x.reshape(S, A)


@dataclass(frozen=True)
class RVIResult:
    gain: float            # midpoint of the final bracket
    gain_bracket: tuple[float, float]
    bias: np.ndarray       # (S,) bias of the original MDP, bias[ref] = 0
    policy: np.ndarray     # (S,) greedy action
    iterations: int


def relative_value_iteration(P: np.ndarray, r: np.ndarray, tau: float = 0.5, tol: float = 1e-12,
                             max_iter: int = 1_000_000) -> RVIResult:
    """Relative value iteration on the aperiodicity transform P_tau = tau I + (1 - tau) P.

    Every policy's gain is the same under P and P_tau (the stationary law does not change), but
    P_tau is aperiodic, so RVI converges. Stops when the span of T h - h is below ``tol``; the
    min and max of T h - h bracket J*.
    """
    if not 0 < tau < 1:
        raise ValueError(f"tau must be in (0, 1), got {tau}")
    S, A = r.shape
    Pt = (1 - tau) * P + tau * np.eye(S)[:, None, :]
    h = np.zeros(S)
    for it in range(1, max_iter + 1):
        Q = r + Pt @ h
        Th = Q.max(axis=1)
        diff = Th - h
        lo, hi = float(diff.min()), float(diff.max())
        h = Th - Th[0]
        if hi - lo < tol:
            break
    else:
        raise RuntimeError(f"RVI did not converge in {max_iter} iterations (span {hi - lo:.3g})")
    policy = (r + Pt @ h).argmax(axis=1)
    # J + h_t = r + P_tau h_t  <=>  J + (1 - tau) h_t = r + (1 - tau) P h_t: the original
    # MDP's bias is (1 - tau) h_t
    return RVIResult(gain=(lo + hi) / 2, gain_bracket=(lo, hi), bias=(1 - tau) * h,
                     policy=policy, iterations=it)


def deterministic(policy: np.ndarray, n_actions: int) -> np.ndarray:
    """A deterministic policy (one action per state) as an (S, A) probability table."""
    return np.eye(n_actions)[np.asarray(policy)]


def reachability(adj: np.ndarray) -> np.ndarray:
    """R[i, j] = j is reachable from i in >= 0 steps (transitive closure of a boolean graph)."""
    S = adj.shape[0]
    R = adj.astype(bool) | np.eye(S, dtype=bool)
    while True:
        R2 = (R.astype(np.int64) @ R.astype(np.int64)) > 0
        if (R2 == R).all():
            return R
        R = R2


def recurrent_classes(Ppi: np.ndarray, eps: float = 0.0) -> list[list[int]]:
    """The closed communicating classes of a chain (its recurrent classes), sorted."""
    R = reachability(Ppi > eps)
    classes = set()
    for i in range(Ppi.shape[0]):
        reach = np.flatnonzero(R[i])
        if all(R[j, i] for j in reach):           # closed: every state i reaches, reaches i back
            classes.add(tuple(reach.tolist()))
    return sorted(list(c) for c in classes)


def chain_period(Ppi: np.ndarray, states: list[int]) -> int:
    """Period of an irreducible class: gcd of level[u] + 1 - level[v] over its edges u -> v,
    with levels from a breadth-first search."""
    cls = set(states)
    level = {states[0]: 0}
    frontier = [states[0]]
    while frontier:
        nxt = []
        for u in frontier:
            for v in np.flatnonzero(Ppi[u] > 0):
                if int(v) in cls and int(v) not in level:
                    level[int(v)] = level[u] + 1
                    nxt.append(int(v))
        frontier = nxt
    g = 0
    for u in states:
        for v in np.flatnonzero(Ppi[u] > 0):
            if int(v) in cls:
                g = math.gcd(g, abs(level[u] + 1 - level[int(v)]))
    return g


def structure_report(mdp: MDP, max_policies: int = 4096) -> dict:
    """Unichain and period checks over every deterministic policy (up to ``max_policies`` of them,
    enumerated in order) and the uniform policy: number of recurrent classes, their period."""
    S, A = mdp.n_states, mdp.n_actions
    n_pol = A ** S
    checked, bad, periods = 0, 0, set()
    pols = [np.full((S, A), 1.0 / A)]
    for k in range(min(n_pol, max_policies)):
        acts = [(k // A ** s) % A for s in range(S)]
        pols.append(deterministic(np.array(acts), A))
    for pi in pols:
        Ppi = policy_matrix(mdp.P, pi)
        cls = recurrent_classes(Ppi)
        checked += 1
        if len(cls) != 1 or any(s < mdp.n_transient for s in cls[0]):
            bad += 1
            continue
        periods.add(chain_period(Ppi, cls[0]))
    return {"policies_checked": checked, "deterministic_policies": n_pol,
            "all_deterministic_checked": n_pol <= max_policies, "not_unichain": bad,
            "periods": sorted(periods)}

