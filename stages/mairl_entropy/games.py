"""The games of the study: random general-sum Markov games (generated from a seed), and the
ambiguity example — two rewards of different nature that share a Nash equilibrium.

Ambiguity example. The stage game ``M = [[1, -1], [-1, 1]]`` (player 1 wants to match) is played
in every state with a state-dependent stake ``c(s) > 0``:

* zero-sum (matching pennies): ``R_1 = c M``, ``R_2 = -c M``;
* identical interest (a coordination game): ``R_1 = R_2 = c M``.

Transitions ``P(s'|s)`` do not depend on the actions, so the continuation value is the same after
every action and each state's stage game decides the equilibrium: uniform play is a Nash
equilibrium of both (each player's actions earn the same against a uniform opponent). Player 1's
reward is the same in both; only player 2's flips sign, which turns a strictly competitive game
into a common-interest one. The same holds for the one-state (matrix) versions.
"""
from __future__ import annotations

import numpy as np

from .qre import Game

PENNIES = np.array([[1.0, -1.0], [-1.0, 1.0]])


def random_game(rng: np.random.Generator, n_states: int, n_actions: tuple[int, int], gamma: float,
                reward_low: float, reward_high: float, concentration: float) -> Game:
    """General-sum game: rewards i.i.d. uniform on [low, high] for each player, state and joint
    action; each ``P(.|s, a1, a2)`` Dirichlet(concentration); uniform initial distribution."""
    a1, a2 = n_actions
    R = rng.uniform(reward_low, reward_high, size=(2, n_states, a1, a2))
    P = rng.dirichlet(np.full(n_states, concentration), size=(n_states, a1, a2))
    return Game(P, R, gamma, np.full(n_states, 1.0 / n_states))


def generate(seed: int, n_games: int, n_states: int, n_actions: tuple[int, int], gamma: float,
             reward_low: float, reward_high: float, concentration: float,
             stake_low: float, stake_high: float) -> dict[str, np.ndarray]:
    """Everything prepare saves (arrays for ``write_npz``): ``P[g], R[g], mu0[g]`` of the random
    games, ``gamma``, and the ambiguity example's transitions and stakes."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x4D41]))
    games = [random_game(rng, n_states, n_actions, gamma, reward_low, reward_high, concentration)
             for _ in range(n_games)]
    amb_P = rng.dirichlet(np.full(n_states, concentration), size=n_states)
    stakes = rng.uniform(stake_low, stake_high, size=n_states)
    return {"P": np.stack([g.P for g in games]), "R": np.stack([g.R for g in games]),
            "mu0": np.stack([g.mu0 for g in games]), "gamma": np.array(gamma),
            "ambiguity_P": amb_P, "ambiguity_stakes": stakes}


def seed_key(seed: int, name: str) -> str:
    """The key of one verdict seed's array in games.npz (``s<seed>/<name>``)."""
    return f"s{seed}/{name}"


def load(path, seed: int | None = None) -> dict[str, np.ndarray]:
    """games.npz, whole (keys ``s<seed>/<name>``), or one seed's arrays under their plain names."""
    with np.load(path) as z:
        if seed is None:
            return {k: z[k] for k in z.files}
        prefix = seed_key(seed, "")
        out = {k[len(prefix):]: z[k] for k in z.files if k.startswith(prefix)}
    if not out:
        raise KeyError(f"{path} holds no games of seed {seed}: run the prepare stage for this profile's seeds")
    return out


def games_from(data: dict[str, np.ndarray]) -> list[Game]:
    gamma = float(data["gamma"])
    return [Game(P, R, gamma, mu0) for P, R, mu0 in zip(data["P"], data["R"], data["mu0"])]


def ambiguity_games(P_state: np.ndarray, stakes: np.ndarray, gamma: float) -> dict[str, Game]:
    """The zero-sum and identical-interest Markov games of the module docstring."""
    S = P_state.shape[0]
    P = np.broadcast_to(P_state[:, None, None, :], (S, 2, 2, S)).copy()
    base = stakes[:, None, None] * PENNIES[None]
    mu0 = np.full(S, 1.0 / S)
    return {"zero_sum": Game(P, np.stack([base, -base]), gamma, mu0),
            "identical_interest": Game(P, np.stack([base, base]), gamma, mu0)}


def nature(R: np.ndarray) -> dict[str, float]:
    """How far a reward pair is from zero-sum (``max |R1 + R2|``) and from identical interest
    (``max |R1 - R2|``), relative to ``max |R|``."""
    scale = float(np.abs(R).max())
    return {"from_zero_sum": float(np.abs(R[0] + R[1]).max()) / scale,
            "from_identical_interest": float(np.abs(R[0] - R[1]).max()) / scale}
