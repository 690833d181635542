"""Reward recovery from demonstrations of the QRE, and its errors.

Identification. At a QRE ``pi`` of reward ``R`` each player's logit response gives
``tau * log pi_i(a_i|s) = Q_i(s, a_i) - V_i(s)`` (soft advantage). So the demonstrations identify,
for each player, the *normalised* reward ``rbar_i(s, a_i) = tau * log pi_i(a_i|s)``, and the true
reward is recovered only up to

    R_i(s, a) = rbar_i(s, a_i) + V_i(s) - gamma * E[V_i(s') | s, a] + xi_i(s, a),
    with sum_{a_-i} pi_-i(a_-i|s) xi_i(s, a_i, a_-i) = 0

(potential shaping with the player's soft value, plus anything that averages out against the
other's policy). ``rbar`` has soft value 0 in every state and its QRE is ``pi`` whatever the other
plays, so it is the canonical member of the feasible set; we compare recovered rewards with the
true reward's ``rbar``, computed from the true reward by soft Bellman (``Q_i - V_i`` at the true
QRE), not from the policy.

Estimation. ``n`` demonstrations ``(s, a1, a2)`` of the QRE, drawn either from a *generative
model* (the paper's sampling model: the expert is queried ``n / S`` times in every state, the
remainder spread over the first states) or i.i.d. from the QRE's discounted state *occupancy*
``d(s) = (1 - gamma) mu0^T (I - gamma P_pi)^-1``, joint actions from ``pi1(a1|s) pi2(a2|s)``; all
repetitions at once by ``Generator.multinomial``. Each player's policy is estimated from its
marginal counts with add-``alpha`` smoothing, and the recovered reward is
``tau * log pihat_i(a_i|s)``.
"""
from __future__ import annotations

import numpy as np

from .qre import Game, evaluate, nash_gap, player_view, soft_policy_iteration, solve_qre


def occupancy(game: Game, pi1: np.ndarray, pi2: np.ndarray) -> np.ndarray:
    """Discounted state occupancy ``d[b, s]`` of the joint policy from ``mu0`` (sums to 1)."""
    S = game.shape[0]
    P_pi = np.einsum("sxyt,bsx,bsy->bst", game.P, pi1, pi2)
    A = np.eye(S)[None] - game.gamma * P_pi          # d^T A = (1 - gamma) mu0^T
    rhs = np.broadcast_to((1 - game.gamma) * game.mu0, (pi1.shape[0], S))
    return np.linalg.solve(np.swapaxes(A, 1, 2), rhs[..., None])[..., 0]


SAMPLING = ("generative", "occupancy")


def sample_counts(rng: np.random.Generator, game: Game, pi1: np.ndarray, pi2: np.ndarray, n: int,
                  reps: int, sampling: str) -> np.ndarray:
    """``reps`` independent joint-count tables ``N[r, s, a1, a2]`` of ``n`` demonstrations of the
    joint policy ``(pi1, pi2)`` (``(S, A)`` arrays), by ``sampling`` (see the module docstring)."""
    S, A1, A2 = game.shape
    joint = (pi1[:, :, None] * pi2[:, None, :]).reshape(S, A1 * A2)
    if sampling == "generative":
        per_state = np.full(S, n // S) + (np.arange(S) < n % S)
        return rng.multinomial(per_state, joint, size=(reps, S)).reshape(reps, S, A1, A2)
    if sampling == "occupancy":
        d = occupancy(game, pi1[None], pi2[None])[0]
        p = (d[:, None] * joint).ravel()
        return rng.multinomial(n, p / p.sum(), size=reps).reshape(reps, S, A1, A2)
    raise ValueError(f"sampling must be one of {SAMPLING}, got {sampling!r}")


def estimate_policies(counts: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Add-``alpha`` smoothed marginal policies from joint counts ``N[r, s, a1, a2]``."""
    n1, n2 = counts.sum(axis=3), counts.sum(axis=2)
    return ((n1 + alpha) / (n1.sum(axis=-1, keepdims=True) + alpha * n1.shape[-1]),
            (n2 + alpha) / (n2.sum(axis=-1, keepdims=True) + alpha * n2.shape[-1]))


def recovered_reward(pi1: np.ndarray, pi2: np.ndarray, tau: float) -> np.ndarray:
    """``R[b, i, s, a1, a2] = tau * log pi_i(a_i|s)`` (the normalised representative)."""
    B, S, A1 = pi1.shape
    A2 = pi2.shape[-1]
    R1 = np.broadcast_to(tau * np.log(pi1)[..., None], (B, S, A1, A2))
    R2 = np.broadcast_to(tau * np.log(pi2)[:, :, None, :], (B, S, A1, A2))
    return np.stack([R1, R2], axis=1)


def normalised_reward(game: Game, pi1: np.ndarray, pi2: np.ndarray, tau: float):
    """The true reward's canonical representative ``Q_i - V_i`` at the joint policy (each
    player's soft-optimal Q against the other): ``(rbar1[s, a1], rbar2[s, a2])``; equal to
    ``tau * log pi_i`` exactly when the policy is the QRE."""
    out = []
    for i, other in ((0, pi2), (1, pi1)):
        r, T = player_view(game, game.R, i, other[None])
        Q, V, _ = soft_policy_iteration(r, T, game.gamma, tau)
        out.append(Q[0] - V[0][:, None])
    return out[0], out[1]


def recovery_errors(game: Game, tau: float, pi1: np.ndarray, pi2: np.ndarray, counts: np.ndarray,
                    alpha: float, solver: dict) -> dict[str, np.ndarray]:
    """Errors of the rewards recovered from each count table (batch ``b``) against the QRE
    ``(pi1, pi2)`` of ``game`` (``(S, A)`` arrays):

    * ``reward_error[b]`` — ``max_{i, s, a_i} |rhat_i - rbar_i|`` (worst case, reward units);
    * ``value_gap[b]`` — ``max_{i, s} |V_i^{pihat_R}(s) - V_i^{pi}(s)|`` under the TRUE reward
      (regularised values), ``pihat_R`` = the QRE of the recovered reward (solved, from uniform);
    * ``nash_gap[b]`` — the regularised Nash gap of ``pihat_R`` under the true reward;
    * ``rationalised[b]`` — ``max |pihat_R - pihat|``: the recovered reward's QRE is the
      estimated policy (0 up to rounding).
    """
    h1, h2 = estimate_policies(counts, alpha)
    B = h1.shape[0]
    rbar1, rbar2 = normalised_reward(game, pi1, pi2, tau)
    R_hat = recovered_reward(h1, h2, tau)
    reward_error = np.maximum(np.abs(tau * np.log(h1) - rbar1).reshape(B, -1).max(axis=1),
                              np.abs(tau * np.log(h2) - rbar2).reshape(B, -1).max(axis=1))
    res = solve_qre(game, tau, np.full_like(h1, 1.0 / h1.shape[-1]), np.full_like(h2, 1.0 / h2.shape[-1]),
                    R=R_hat, **solver)
    V_true = evaluate(game, game.R, pi1[None], pi2[None], tau)
    V_hat = evaluate(game, game.R, res.pi1, res.pi2, tau)
    return {
        "reward_error": reward_error,
        "value_gap": np.abs(V_hat - V_true).reshape(B, -1).max(axis=1),
        "nash_gap": nash_gap(game, game.R, res.pi1, res.pi2, tau),
        "rationalised": np.maximum(np.abs(res.pi1 - h1).reshape(B, -1).max(axis=1),
                                   np.abs(res.pi2 - h2).reshape(B, -1).max(axis=1)),
        "converged": res.converged,
    }


def n_grid(n_min: int, n_max: int, per_decade: int) -> np.ndarray:
    """Sample sizes on a log grid (rounded to integers, distinct, ends included)."""
    k = int(round(np.log10(n_max / n_min) * per_decade))
    return np.unique(np.round(np.logspace(np.log10(n_min), np.log10(n_max), k + 1)).astype(int))
