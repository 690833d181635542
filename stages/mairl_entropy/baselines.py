"""Library answers the QRE solver is checked against (each run for real, not re-implemented).

* :func:`qre_by_root` — ``scipy.optimize.root`` (MINPACK ``hybr``) on the logit equilibrium
  equations ``log pi_i = log softmax(Q_i^pi / tau)``, with ``Q_i^pi`` from exact policy evaluation
  (a linear solve), in log-policy coordinates. A different formulation from
  :func:`stages.mairl_entropy.qre.solve_qre` (soft value iteration + damping): same fixed points.
* :func:`qre_by_mmd` — open_spiel's magnetic mirror descent with dilated entropy
  (``open_spiel.python.algorithms.mmd_dilated``), which converges to the QRE of a two-player
  zero-sum game with regularisation ``alpha = tau``; matrix games only here.
"""
from __future__ import annotations

import numpy as np

from .qre import Game, q_of_policy, softmax


def _log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def qre_by_root(game: Game, tau: float, pi1: np.ndarray | None = None, pi2: np.ndarray | None = None,
                tol: float = 1e-14) -> tuple[np.ndarray, np.ndarray, bool]:
    """The QRE by ``scipy.optimize.root`` from ``(pi1, pi2)`` (``(S, A)`` arrays; uniform if
    None). Returns ``(pi1, pi2, success)``."""
    from scipy.optimize import root

    S, A1, A2 = game.shape
    pi1 = np.full((S, A1), 1.0 / A1) if pi1 is None else pi1
    pi2 = np.full((S, A2), 1.0 / A2) if pi2 is None else pi2
    n1 = S * A1

    def split(z):
        return z[:n1].reshape(S, A1), z[n1:].reshape(S, A2)

    def equations(z):
        z1, z2 = split(z)
        p1, p2 = softmax(z1)[None], softmax(z2)[None]
        Q1, Q2 = q_of_policy(game, game.R, p1, p2, tau)
        return np.concatenate([(z1 - _log_softmax(Q1[0] / tau)).ravel(),
                               (z2 - _log_softmax(Q2[0] / tau)).ravel()])

    z0 = np.concatenate([np.log(pi1).ravel(), np.log(pi2).ravel()])
    sol = root(equations, z0, method="hybr", tol=tol)
    z1, z2 = split(sol.x)
    return softmax(z1), softmax(z2), bool(sol.success)


def qre_by_mmd(A: np.ndarray, tau: float, iterations: int) -> tuple[np.ndarray, np.ndarray, float]:
    """The QRE of the zero-sum matrix game (row player's payoff ``A``) by open_spiel's MMD.
    Returns ``(x, y, gap)`` with open_spiel's own saddle-point gap of the regularised game."""
    import pyspiel
    from open_spiel.python.algorithms import mmd_dilated

    A = np.asarray(A, dtype=float)
    game = pyspiel.convert_to_turn_based(pyspiel.create_matrix_game(A.tolist(), (-A).tolist()))
    mmd = mmd_dilated.MMDDilatedEnt(game, tau)
    for _ in range(iterations):
        mmd.update_sequences()
    probs = mmd.get_policies().action_probability_array
    return probs[0, :A.shape[0]].copy(), probs[1, :A.shape[1]].copy(), float(mmd.get_gap())

