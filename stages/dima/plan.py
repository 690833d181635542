"""Planning through a world model (cross-entropy method over discrete action sequences), and the
real-env evaluation of a policy.

At each real step, :func:`cem_plan` imagines ``candidates`` joint action sequences of length
``horizon`` in the model, scores them by the sum of predicted rewards, refits per (step, agent)
categorical distributions to the ``elites`` best (smoothed), and after ``iterations`` rounds plays
the first action of the best sequence seen (receding horizon, MPC). :func:`evaluate_policy` plays a
policy in the real simple_spread for fixed seeds and returns the episode returns (sum over steps
of the agents' mean reward).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .env import N_ACTIONS, make_parallel, physical_state, spread_reward

PUSH = np.array([(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)], dtype=float)


class ExactDynamics:
    """simple_spread's physics without collisions (exact for N=1, tests/dima/test_env.py) and its
    closed-form reward: the planner's reference model ("mpc_true")."""

    def __init__(self, n: int):
        self.n = n

    def imagine(self, s0: np.ndarray, actions: np.ndarray):
        n, s, states, rews = self.n, np.array(np.atleast_2d(s0), dtype=float), [], []
        for h in range(actions.shape[1]):
            s = s.copy()
            vel = s[:, 2 * n:4 * n].copy()
            s[:, :2 * n] += 0.1 * vel
            s[:, 2 * n:4 * n] = 0.75 * vel + 0.5 * PUSH[actions[:, h]].reshape(len(s), 2 * n)
            states.append(s)
            rews.append(spread_reward(s, n))
        return np.stack(states, 1), np.stack(rews, 1)


def cem_plan(model, s: np.ndarray, n: int, horizon: int, candidates: int, elites: int, iterations: int,
             rng: np.random.Generator, smoothing: float = 0.7) -> np.ndarray:
    """First joint action (n,) of the best imagined sequence."""
    if not 1 <= elites <= candidates:
        raise ValueError(f"elites must be in 1..candidates ({candidates}), got {elites}")
    probs = np.full((horizon, n, N_ACTIONS), 1.0 / N_ACTIONS)
    best_a, best_v = None, -np.inf
    for _ in range(iterations):
        cum = probs.cumsum(-1)
        u = rng.random((candidates, horizon, n, 1))
        acts = np.minimum((u > cum[None]).sum(-1), N_ACTIONS - 1)          # (C, H, n)
        _, rew = model.imagine(np.repeat(s[None], candidates, 0), acts)
        val = rew.sum(1)
        top = np.argsort(-val, kind="stable")[:elites]
        if val[top[0]] > best_v:
            best_v, best_a = float(val[top[0]]), acts[top[0], 0].copy()
        freq = np.stack([(acts[top] == k).mean(0) for k in range(N_ACTIONS)], -1)
        probs = smoothing * freq + (1 - smoothing) * probs
    return best_a


def eval_seeds(seed: int, episodes: int) -> list[int]:
    """The real-env seeds every policy is evaluated on (paired across policies and stages)."""
    return [int(10_000 * (seed + 1) + i) for i in range(episodes)]


def evaluate_policy(policy: Callable[[np.ndarray], np.ndarray], n: int, max_cycles: int, seeds: list[int]) -> np.ndarray:
    """Returns of ``policy`` (state -> joint action) in the real env, one per seed."""
    env = make_parallel(n, max_cycles)
    out = []
    for sd in seeds:
        env.reset(seed=int(sd))
        total = 0.0
        for _ in range(max_cycles):
            a = np.asarray(policy(physical_state(env))).reshape(-1)
            _, rew, term, trunc, _ = env.step({ag: int(a[i]) for i, ag in enumerate(env.agents)})
            total += float(np.mean(list(rew.values())))
            if any(term.values()) or any(trunc.values()):
                break
        out.append(total)
    env.close()
    return np.asarray(out)
