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

What a learner does with it (:func:`transfer_errors`). The identified part alone (``rbar``,
own-action only) makes each player's estimated policy a dominant strategy: its QRE is ``pihat``
at any tau, so it cannot show whether the equilibrium is unique. The member of the estimated
feasible set that the error analysis matches to the true reward keeps the true reward's
unidentified part, its shaping ``V_i`` and its terms ``xi_i`` that couple the players
(:func:`matched_reward`): ``Rhat_i = tau log pihat_i + V_i(s) - gamma E[V_i(s')|s, a] + xihat_i``,
``xihat_i = xi_i - E_{a_-i ~ pihat_-i}[xi_i]`` (re-centred against the estimated opponent, so
``pihat`` is exactly a QRE of ``Rhat``). A learner computes the QRE of ``Rhat`` from its own random
starts; where the equilibrium is unique it gets ``pihat``, where it is not it can end at another.

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

from .qre import Game, evaluate, fixed_point_residual, nash_gap, player_view, soft_policy_iteration, solve_qre


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


def reward_parts(game: Game, tau: float, pi1: np.ndarray, pi2: np.ndarray) -> list[dict[str, np.ndarray]]:
    """The true reward's decomposition at its QRE ``(pi1, pi2)`` (``(S, A)`` arrays), per player:
    ``R_i = tau log pi_i + shaping_i + xi_i`` with ``shaping_i = V_i(s) - gamma E[V_i(s')|s, a]``
    (``V_i`` the player's soft value) and ``xi_i`` averaging to 0 against the other's policy.
    Returns ``[{"shaping": (S, A1, A2), "xi": (S, A1, A2)}, ...]`` for players 0 and 1."""
    out = []
    for i, other in ((0, pi2), (1, pi1)):
        r, T = player_view(game, game.R, i, other[None])
        Q, V, _ = soft_policy_iteration(r, T, game.gamma, tau)
        Q, V = Q[0], V[0]
        shaping = V[:, None, None] - game.gamma * game.P @ V
        own = (Q - V[:, None])[:, :, None] if i == 0 else (Q - V[:, None])[:, None, :]
        out.append({"shaping": shaping, "xi": game.R[i] - own - shaping})
    return out


def matched_reward(game: Game, tau: float, pi1: np.ndarray, pi2: np.ndarray, h1: np.ndarray,
                   h2: np.ndarray) -> np.ndarray:
    """``Rhat[b, i, s, a1, a2]``: for each estimate ``(h1[b], h2[b])`` the member of its feasible
    set matched to the true reward (module docstring): the estimated identified part
    ``tau log h_i``, the true shaping, and the true coupling terms re-centred against ``h_-i``."""
    parts = reward_parts(game, tau, pi1, pi2)
    x1, x2 = parts[0]["xi"], parts[1]["xi"]
    R1 = (tau * np.log(h1)[..., None] + parts[0]["shaping"][None]
          + x1[None] - np.einsum("sxy,bsy->bsx", x1, h2)[..., None])
    R2 = (tau * np.log(h2)[:, :, None, :] + parts[1]["shaping"][None]
          + x2[None] - np.einsum("sxy,bsx->bsy", x2, h1)[:, :, None, :])
    return np.stack([R1, R2], axis=1)


def policy_distance(a1: np.ndarray, a2: np.ndarray, b1: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """``max |a - b|`` over both players' probabilities, per batch member (``b`` may be one
    policy pair without the batch axis)."""
    B = a1.shape[0]
    return np.maximum(np.abs(a1 - b1).reshape(B, -1).max(axis=1), np.abs(a2 - b2).reshape(B, -1).max(axis=1))


def transfer_errors(game: Game, tau: float, pi1: np.ndarray, pi2: np.ndarray, counts: np.ndarray,
                    alpha: float, starts: tuple[np.ndarray, np.ndarray], solver: dict) -> dict[str, np.ndarray]:
    """A learner's QRE of the matched recovered reward, from its own starts. ``counts[r]`` are
    the demonstration sets of the expert's QRE ``(pi1, pi2)``; ``starts`` = ``(s1, s2)`` with
    ``r x K`` learner starts, ``K`` per set (in order). Per learner run: ``distance`` to the
    expert's policy, ``from_estimate`` (to the set's estimate ``pihat``, which is a QRE of the
    recovered reward: > 0 means the learner found another equilibrium), ``value_gap`` (max over
    players and states of ``|V_i^learned - V_i^expert|`` under the TRUE reward, regularised at
    tau), ``converged``; per set: ``estimate_error`` (``pihat`` to the expert) and
    ``estimate_residual`` (the fixed-point residual of ``pihat`` under its recovered reward)."""
    h1, h2 = estimate_policies(counts, alpha)
    R_hat = matched_reward(game, tau, pi1, pi2, h1, h2)
    s1, s2 = starts
    K = s1.shape[0] // h1.shape[0]
    if K * h1.shape[0] != s1.shape[0]:
        raise ValueError(f"transfer_errors: {s1.shape[0]} starts for {h1.shape[0]} demonstration sets")
    res = solve_qre(game, tau, s1, s2, R=np.repeat(R_hat, K, axis=0), **solver)
    V_true = evaluate(game, game.R, pi1[None], pi2[None], tau)
    V_hat = evaluate(game, game.R, res.pi1, res.pi2, tau)
    return {
        "distance": policy_distance(res.pi1, res.pi2, pi1, pi2),
        "from_estimate": policy_distance(res.pi1, res.pi2, np.repeat(h1, K, axis=0), np.repeat(h2, K, axis=0)),
        "value_gap": np.abs(V_hat - V_true).reshape(res.pi1.shape[0], -1).max(axis=1),
        "converged": res.converged,
        "estimate_error": policy_distance(h1, h2, pi1, pi2),
        "estimate_residual": fixed_point_residual(game, R_hat, h1, h2, tau),
    }
