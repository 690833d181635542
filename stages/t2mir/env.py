"""DarkRoom as a gymnasium environment: an ``n`` x ``n`` grid, the goal cell is the task.

State (x, y) as float32, actions 0..4 = +x, -x, +y, -y, stay; reward 1 on every step the agent is
on the goal (after its move); episodes are cut at ``horizon`` steps (truncated). The start cell is
drawn from the seeded generator. Registered as ``t2mir/DarkRoom-v0``.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

ENV_ID = "t2mir/DarkRoom-v0"
MOVES = np.array([[1, 0], [-1, 0], [0, 1], [0, -1], [0, 0]], dtype=np.int64)
N_ACTIONS = 5


def optimal_action(state, goal) -> int:
    """The optimal action in closed form: close the x gap first, then the y gap, then stay."""
    dx, dy = int(goal[0]) - int(state[0]), int(goal[1]) - int(state[1])
    if dx:
        return 0 if dx > 0 else 1
    if dy:
        return 2 if dy > 0 else 3
    return 4


def optimal_actions(states: np.ndarray, goals: np.ndarray) -> np.ndarray:
    """Vectorised ``optimal_action`` over rows of ``states`` (m, 2) and ``goals`` (m, 2)."""
    d = goals.astype(np.int64) - states.astype(np.int64)
    return np.where(d[:, 0] > 0, 0, np.where(d[:, 0] < 0, 1, np.where(d[:, 1] > 0, 2, np.where(d[:, 1] < 0, 3, 4))))


def step_states(states: np.ndarray, actions: np.ndarray, size: int) -> np.ndarray:
    """Next cells of a batch of moves, clipped at the walls."""
    return np.clip(states.astype(np.int64) + MOVES[actions], 0, size - 1)


def oracle_return(start, goal, horizon: int) -> int:
    """Return of the optimal policy from ``start``: reward on every step from reaching the goal on."""
    dist = abs(int(goal[0]) - int(start[0])) + abs(int(goal[1]) - int(start[1]))
    return horizon if dist == 0 else max(0, horizon - dist + 1)


class DarkRoom(gym.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 8}

    def __init__(self, size: int = 6, goal=(5, 5), horizon: int = 25, render_mode: str | None = None):
        if size < 2:
            raise ValueError(f"size must be >= 2, got {size}")
        goal = np.asarray(goal, dtype=np.int64)
        if goal.shape != (2,) or goal.min() < 0 or goal.max() >= size:
            raise ValueError(f"goal must be a cell of the {size}x{size} grid, got {goal.tolist()}")
        if horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.size, self.goal, self.horizon, self.render_mode = size, goal, horizon, render_mode
        self.observation_space = spaces.Box(0.0, float(size - 1), shape=(2,), dtype=np.float32)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.state = np.zeros(2, dtype=np.int64)
        self.t = 0

    def _obs(self):
        return self.state.astype(np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if options and "start" in options:
            self.state = np.asarray(options["start"], dtype=np.int64)
        else:
            self.state = self.np_random.integers(0, self.size, size=2).astype(np.int64)
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"action must be in 0..{N_ACTIONS - 1}, got {action!r}")
        self.state = np.clip(self.state + MOVES[int(action)], 0, self.size - 1)
        self.t += 1
        reward = float(np.array_equal(self.state, self.goal))
        return self._obs(), reward, False, self.t >= self.horizon, {}

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        cell = 24
        img = np.full((self.size * cell, self.size * cell, 3), 30, dtype=np.uint8)
        img[::cell, :, :] = 80
        img[:, ::cell, :] = 80
        gx, gy = self.goal
        img[gy * cell + 3:(gy + 1) * cell - 3, gx * cell + 3:(gx + 1) * cell - 3] = (40, 200, 60)
        ax, ay = self.state
        img[ay * cell + 7:(ay + 1) * cell - 7, ax * cell + 7:(ax + 1) * cell - 7] = (230, 60, 50)
        return img[::-1].copy()          # y up


gym.register(id=ENV_ID, entry_point=DarkRoom)
