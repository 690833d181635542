"""Entropy-regularised two-player Markov games: soft Bellman, logit responses and the quantal
response equilibrium (QRE) by a damped soft fixed point.

A game is ``P[s, a1, a2, s']`` (transitions), ``R[i, s, a1, a2]`` (player i's reward), a discount
``gamma`` and an initial distribution ``mu0``. Player i maximises
``E[sum_t gamma^t (R_i(s_t, a_t) - tau * log pi_i(a_i,t | s_t))]`` (its own entropy bonus only).
With the other player's policy fixed that is a single-agent soft MDP; its optimum is the logit
(soft-max) response ``pi_i(a_i|s) ∝ exp(Q_i(s, a_i) / tau)`` with the soft Bellman equations

    Q_i(s, a_i) = sum_{a_-i} pi_-i(a_-i|s) [R_i(s, a) + gamma * sum_s' P(s'|s, a) V_i(s')]
    V_i(s)      = tau * log sum_{a_i} exp(Q_i(s, a_i) / tau)

A QRE (logit equilibrium) is a joint policy where each player's policy is its logit response to
the other's. :func:`solve_qre` finds it by the damped iteration
``pi <- (1 - eta) pi + eta * LogitResponse(pi)`` (``eta`` adapted per start), the response
computed by soft policy iteration (warm-started), for a batch of starts at once.

Everything is batched over a leading axis ``b``: policies ``pi1[b, s, a1]``, ``pi2[b, s, a2]``;
rewards ``R[i, s, a1, a2]`` (shared) or ``R[b, i, s, a1, a2]`` (one per batch member); transitions
``P[s, a1, a2, s']`` (shared) or ``P[b, s, a1, a2, s']`` (a *stacked* game: one game per batch
member, e.g. the games of several seeds solved in one batch; :func:`stack_games`).
``tau = 0`` gives the unregularised quantities (hard max, no entropy) used for Nash gaps.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Game:
    """A two-player discounted Markov game (arrays as in the module docstring)."""

    P: np.ndarray      # (S, A1, A2, S), rows sum to 1; or (B, S, A1, A2, S) stacked
    R: np.ndarray      # (2, S, A1, A2); or (B, 2, S, A1, A2) stacked
    gamma: float
    mu0: np.ndarray    # (S,)

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.P.shape[-4], self.P.shape[-3], self.P.shape[-2]


def stack_games(games: list[Game], counts: list[int]) -> Game:
    """One stacked game whose batch holds ``counts[k]`` copies of ``games[k]`` in order (same
    sizes and discount): solve many games' starts in one :func:`solve_qre` call."""
    gammas = {g.gamma for g in games}
    if len(gammas) != 1:
        raise ValueError(f"stack_games: the games' discounts differ: {sorted(gammas)}")
    reps = np.repeat(np.arange(len(games)), counts)
    return Game(np.stack([g.P for g in games])[reps], np.stack([g.R for g in games])[reps],
                gammas.pop(), games[0].mu0)


def matrix_game(R1, R2) -> Game:
    """A one-shot bimatrix game as a one-state Markov game (gamma = 0, a self-loop)."""
    R1, R2 = np.asarray(R1, dtype=float), np.asarray(R2, dtype=float)
    a1, a2 = R1.shape
    return Game(np.ones((1, a1, a2, 1)), np.stack([R1, R2])[:, None], 0.0, np.ones(1))


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    z = np.exp(x - x.max(axis=axis, keepdims=True))
    return z / z.sum(axis=axis, keepdims=True)


def soft_max_value(Q: np.ndarray, tau: float) -> np.ndarray:
    """``tau * logsumexp(Q / tau)`` over the last axis (``max`` when tau = 0)."""
    m = Q.max(axis=-1)
    if tau == 0:
        return m
    return m + tau * np.log(np.exp((Q - m[..., None]) / tau).sum(axis=-1))


def entropy(pi: np.ndarray) -> np.ndarray:
    """Shannon entropy over the last axis (0 log 0 = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(pi > 0, pi * np.log(pi), 0.0).sum(axis=-1)


def _rewards(R: np.ndarray, batch: int) -> np.ndarray:
    R = np.asarray(R, dtype=float)
    return np.broadcast_to(R, (batch, *R.shape)) if R.ndim == 4 else R


def player_view(game: Game, R: np.ndarray, player: int, pi_other: np.ndarray):
    """Player ``player``'s single-agent MDP with the other's policy fixed:
    expected reward ``r[b, s, a]`` and transitions ``T[b, s, a, s']``."""
    R = _rewards(R, pi_other.shape[0])
    P, p = game.P, ("b" if game.P.ndim == 5 else "")
    if player == 0:
        return (np.einsum("bsxy,bsy->bsx", R[:, 0], pi_other),
                np.einsum(f"{p}sxyt,bsy->bsxt", P, pi_other))
    return (np.einsum("bsxy,bsx->bsy", R[:, 1], pi_other),
            np.einsum(f"{p}sxyt,bsx->bsyt", P, pi_other))


def soft_response(r: np.ndarray, T: np.ndarray, gamma: float, tau: float,
                  V0: np.ndarray | None = None, tol: float = 1e-14, max_iter: int = 10_000):
    """Soft value iteration on the MDP ``(r, T)`` until the sup-norm change is ``<= tol``.

    Returns ``(Q, V, iterations)``; the logit response is ``softmax(Q / tau)``. Warm-start with
    ``V0``. A gamma-contraction, so it converges from anywhere; ``max_iter`` only guards.
    """
    V = np.zeros(r.shape[:2]) if V0 is None else V0
    for it in range(1, max_iter + 1):
        Q = r + gamma * np.einsum("bsat,bt->bsa", T, V)
        V_new = soft_max_value(Q, tau)
        delta = np.abs(V_new - V).max()
        V = V_new
        if delta <= tol:
            break
    Q = r + gamma * np.einsum("bsat,bt->bsa", T, V)
    return Q, V, it


def soft_policy_iteration(r: np.ndarray, T: np.ndarray, gamma: float, tau: float,
                          pi0: np.ndarray | None = None, tol: float = 1e-14, max_iter: int = 100):
    """The same soft-optimal ``(Q, V)`` as :func:`soft_response`, by soft policy iteration
    (Newton's method on the soft Bellman equation: exact evaluation by a linear solve, then the
    logit improvement), warm-started from ``pi0``. Stops when the soft Bellman residual
    ``max |tau logsumexp(Q / tau) - V|`` is ``<= tol`` or stops falling (the rounding floor);
    converges quadratically, in a handful of steps. Returns ``(Q, V, iterations)``."""
    B, S, A = r.shape
    pi = np.full((B, S, A), 1.0 / A) if pi0 is None else pi0
    eye = np.eye(S)[None]
    best = np.inf
    for it in range(1, max_iter + 1):
        T_pi = np.einsum("bsat,bsa->bst", T, pi)
        r_pi = (r * pi).sum(axis=-1) + tau * entropy(pi)
        V = np.linalg.solve(eye - gamma * T_pi, r_pi[..., None])[..., 0]
        Q = r + gamma * np.einsum("bsat,bt->bsa", T, V)
        res = np.abs(soft_max_value(Q, tau) - V).max()
        if res <= tol or res >= best:
            break
        best = res
        pi = logit_response(Q, tau)
    return Q, V, it


def logit_response(Q: np.ndarray, tau: float) -> np.ndarray:
    return softmax(Q / tau, axis=-1)


def evaluate(game: Game, R: np.ndarray, pi1: np.ndarray, pi2: np.ndarray, tau: float) -> np.ndarray:
    """Regularised values ``V[b, i, s]`` of the joint policy (each player's own entropy bonus),
    by an exact linear solve ``(I - gamma P_pi) V_i = r_i,pi``."""
    B, S = pi1.shape[:2]
    R = _rewards(R, B)
    P_pi = np.einsum(("b" if game.P.ndim == 5 else "") + "sxyt,bsx,bsy->bst", game.P, pi1, pi2)
    r = np.einsum("bisxy,bsx,bsy->bis", R, pi1, pi2)
    r = r + tau * np.stack([entropy(pi1), entropy(pi2)], axis=1)
    A = np.eye(S)[None] - game.gamma * P_pi
    return np.linalg.solve(A[:, None], r[..., None])[..., 0]


def q_of_policy(game: Game, R: np.ndarray, pi1: np.ndarray, pi2: np.ndarray, tau: float):
    """Each player's Q-function under the joint policy (its own regularised value as the
    continuation): ``(Q1[b, s, a1], Q2[b, s, a2])``."""
    V = evaluate(game, R, pi1, pi2, tau)
    out = []
    for i, other in ((0, pi2), (1, pi1)):
        r, T = player_view(game, R, i, other)
        out.append(r + game.gamma * np.einsum("bsat,bt->bsa", T, V[:, i]))
    return out[0], out[1]


def nash_gap(game: Game, R: np.ndarray, pi1: np.ndarray, pi2: np.ndarray, tau: float,
             tol: float = 1e-14) -> np.ndarray:
    """``gap[b] = max_{i, s} (V_i^{BR_i, pi_-i}(s) - V_i^{pi}(s))``: how much a player gains by
    its (soft, if tau > 0) best response. Zero exactly at a QRE (tau > 0) / Nash (tau = 0).
    The best response by soft policy iteration (tau > 0) or value iteration (tau = 0)."""
    V = evaluate(game, R, pi1, pi2, tau)
    gaps = []
    for i, own, other in ((0, pi1, pi2), (1, pi2, pi1)):
        r, T = player_view(game, R, i, other)
        if tau > 0:
            _, V_br, _ = soft_policy_iteration(r, T, game.gamma, tau, pi0=own, tol=tol)
        else:
            _, V_br, _ = soft_response(r, T, game.gamma, 0.0, V0=V[:, i], tol=tol)
        gaps.append((V_br - V[:, i]).max(axis=-1))
    return np.maximum(gaps[0], gaps[1])


SHRINK, GROW = 0.8, 1.1      # adaptive damping of solve_qre


@dataclass
class QREResult:
    pi1: np.ndarray           # (B, S, A1)
    pi2: np.ndarray           # (B, S, A2)
    residual: np.ndarray      # (B,) max |LogitResponse(pi) - pi| at the end
    iterations: int
    converged: np.ndarray     # (B,) residual <= tol
    inner_iterations: int     # soft value-iteration sweeps, all outer steps together


def fixed_point_residual(game: Game, R: np.ndarray, pi1: np.ndarray, pi2: np.ndarray, tau: float,
                         tol: float = 1e-14) -> np.ndarray:
    """``max |LogitResponse(pi) - pi|`` per batch member (zero exactly at a QRE)."""
    res = []
    for i, own, other in ((0, pi1, pi2), (1, pi2, pi1)):
        r, T = player_view(game, R, i, other)
        Q, _, _ = soft_response(r, T, game.gamma, tau, tol=tol)
        res.append(np.abs(logit_response(Q, tau) - own).reshape(own.shape[0], -1).max(axis=1))
    return np.maximum(res[0], res[1])


def solve_qre(game: Game, tau: float, pi1: np.ndarray, pi2: np.ndarray, R: np.ndarray | None = None,
              damping: float = 0.5, min_damping: float = 1e-3, tol: float = 1e-13, max_iter: int = 5000,
              inner_tol: float = 1e-14, inner_max_iter: int = 100) -> QREResult:
    """Damped soft fixed point from the starts ``(pi1[b], pi2[b])`` (a batch).

    Each step computes both players' logit responses to the current joint policy (the soft
    Bellman equation of each player with the other's policy fixed, solved by soft policy
    iteration warm-started from the previous response) and moves ``eta`` of the way to them,
    simultaneously. ``eta`` starts at ``damping``; for a batch member whose residual grew it is
    multiplied by SHRINK = 0.8 (not below ``min_damping``), else by GROW = 1.1 (not above
    ``damping``); these two were picked on matching pennies and random games at tau = 0.1-0.5
    (all converge at tau >= 0.1; halving instead stalled some runs). Near a QRE of
    a competitive game the response map rotates with gain ~ 1/tau (matching pennies: eigenvalues
    ±i/tau), so a fixed step converges only for ``eta < 2 tau^2 / (1 + tau^2)``. Stops when every
    batch member's residual ``max |response - pi|`` is ``<= tol`` or after ``max_iter`` steps.
    """
    if tau <= 0:
        raise ValueError(f"solve_qre: tau must be > 0, got {tau}")
    if not 0 < min_damping <= damping <= 1:
        raise ValueError(f"solve_qre: need 0 < min_damping <= damping <= 1, got {min_damping}, {damping}")
    R = game.R if R is None else R
    pi1, pi2 = np.array(pi1, dtype=float), np.array(pi2, dtype=float)
    B = pi1.shape[0]
    br = [pi1, pi2]
    inner = 0
    residual = np.full(B, np.inf)
    eta = np.full((B, 1, 1), float(damping))
    for it in range(1, max_iter + 1):
        previous = residual
        for i, other in ((0, pi2), (1, pi1)):
            r, T = player_view(game, R, i, other)
            Q, _, n = soft_policy_iteration(r, T, game.gamma, tau, pi0=br[i], tol=inner_tol,
                                            max_iter=inner_max_iter)
            inner += n
            br[i] = logit_response(Q, tau)
        residual = np.maximum(np.abs(br[0] - pi1).reshape(B, -1).max(axis=1),
                              np.abs(br[1] - pi2).reshape(B, -1).max(axis=1))
        if residual.max() <= tol:
            break
        grew = (residual > previous)[:, None, None]
        eta = np.where(grew, np.maximum(eta * SHRINK, min_damping), np.minimum(eta * GROW, damping))
        pi1 = (1 - eta) * pi1 + eta * br[0]
        pi2 = (1 - eta) * pi2 + eta * br[1]
    return QREResult(pi1, pi2, residual, it, residual <= tol, inner)


def uniform_policies(game: Game, batch: int = 1) -> tuple[np.ndarray, np.ndarray]:
    S, A1, A2 = game.shape
    return np.full((batch, S, A1), 1.0 / A1), np.full((batch, S, A2), 1.0 / A2)


def random_policies(game: Game, batch: int, rng: np.random.Generator,
                    concentration: float) -> tuple[np.ndarray, np.ndarray]:
    """Dirichlet(concentration) policies in every state (small concentration = near corners)."""
    S, A1, A2 = game.shape
    return (rng.dirichlet(np.full(A1, concentration), size=(batch, S)),
            rng.dirichlet(np.full(A2, concentration), size=(batch, S)))


def max_pairwise_distance(pi1: np.ndarray, pi2: np.ndarray) -> float:
    """``max_{b, c} max |pi[b] - pi[c]|`` over both players' probabilities (sup norm): per
    coordinate the largest pairwise gap is max - min over the batch."""
    flat = np.concatenate([pi1.reshape(pi1.shape[0], -1), pi2.reshape(pi2.shape[0], -1)], axis=1)
    return float((flat.max(axis=0) - flat.min(axis=0)).max())


def distinct(pi1: np.ndarray, pi2: np.ndarray, radius: float) -> np.ndarray:
    """Indices of batch members that are pairwise more than ``radius`` apart (sup norm),
    greedily in batch order: a count of distinct equilibria among converged runs."""
    if pi1.shape[0] == 0:
        return np.zeros(0, dtype=int)
    flat = np.concatenate([pi1.reshape(pi1.shape[0], -1), pi2.reshape(pi2.shape[0], -1)], axis=1)
    keep: list[int] = []
    for b in range(flat.shape[0]):
        if all(np.abs(flat[b] - flat[k]).max() > radius for k in keep):
            keep.append(b)
    return np.array(keep, dtype=int)
