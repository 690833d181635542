"""The Labyrinth gymnasium environment (id ``claimbench/Labyrinth-v0``), after the official one
(github.com/NathanGavenski/Labyrinth): a maze from a given list (or a fresh random one per reset),
four actions, reward 1 at the goal, -0.1/n^2 a step, -100 on ice; terminated at the goal or on
ice, truncated after ``max_steps``. Observation: the (12, n, n) planes of :func:`maze.encode`.
``render_mode="rgb_array"`` draws the maze (:func:`maze.render_rgb`)."""
from __future__ import annotations

from typing import Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .maze import ICE_REWARD, N_CHANNELS, STEP_PENALTY, VARIANTS, Maze, encode, generate, render_rgb, transition

ENV_ID = "claimbench/Labyrinth-v0"


class LabyrinthEnv(gym.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, n: int = 8, variant: str = "base", mazes: Sequence[Maze] | None = None,
                 view_radius: int | None = None, max_steps: int | None = None, loop_fraction: float = 0.1,
                 render_mode: str | None = None):
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        if mazes is not None:
            if len(mazes) == 0:
                raise ValueError("mazes must hold at least one maze")
            if any(m.n != mazes[0].n for m in mazes):
                raise ValueError("all mazes of one environment must have the same size")
            n = mazes[0].n
        if view_radius is None and variant == "partial":
            view_radius = 1
        if view_radius is not None and view_radius < 0:
            raise ValueError(f"view_radius must be >= 0, got {view_radius}")
        self.n, self.variant, self.mazes = n, variant, list(mazes) if mazes is not None else None
        self.view_radius, self.loop_fraction = view_radius, loop_fraction
        self.max_steps = 4 * n * n if max_steps is None else int(max_steps)
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0.0, 1.0, (N_CHANNELS, n, n), np.float32)
        self.action_space = spaces.Discrete(4)
        self.maze: Maze | None = None

    def _obs(self):
        return encode(self.maze, self.cell, self.has_key, self.view_radius)

    def _info(self):
        return {"maze": self.maze.structure_hash(), "cell": self.cell, "has_key": self.has_key}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if options and "maze" in options:
            self.maze = options["maze"]
        elif self.mazes is not None:
            self.maze = self.mazes[int(self.np_random.integers(len(self.mazes)))]
        else:
            self.maze = generate(self.n, self.variant, self.np_random, self.loop_fraction)
        self.cell, self.has_key, self.t = self.maze.start, 0, 0
        return self._obs(), self._info()

    def step(self, action):
        if self.maze is None:
            raise RuntimeError("call reset() before step()")
        if not self.action_space.contains(action):
            raise ValueError(f"action must be in 0..3, got {action!r}")
        self.cell, self.has_key, outcome = transition(self.maze, self.cell, self.has_key, int(action))
        self.t += 1
        if outcome == "ice":
            reward = ICE_REWARD
        elif outcome == "goal":
            reward = 1.0
        else:
            reward = STEP_PENALTY / self.n ** 2
        terminated = outcome is not None
        truncated = (not terminated) and self.t >= self.max_steps
        return self._obs(), float(reward), terminated, truncated, self._info()

    def render(self):
        if self.render_mode != "rgb_array" or self.maze is None:
            return None
        return render_rgb(self.maze, self.cell, self.has_key, self.view_radius)


if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point="stages.labyrinth.env:LabyrinthEnv")
