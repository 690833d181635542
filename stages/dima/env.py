"""The dima study's environment: mpe2's simple_spread, as is, plus a centralised gymnasium view.

* :func:`make_parallel` builds the pinned ``mpe2.simple_spread_v3`` parallel env (pettingzoo's
  parallel API, discrete actions 0 no-op, 1 -x, 2 +x, 3 -y, 4 +y).
* :func:`physical_state` reads the compact state the world models predict: agent positions
  (2N), agent velocities (2N), landmark positions (2N). Every agent observation of
  simple_spread is a function of it (relative positions, own velocity), so a model of it is a
  model of the observations.
* :class:`SpreadCentralEnv` is the single-agent (centralised) gymnasium view: observation the
  physical state, action ``MultiDiscrete([5] * N)`` (one action per agent), reward the mean of the
  agents' rewards. It is registered as ``claimbench/DimaSpread-v0``.
* :func:`heuristic_actions` is the behaviour policy's heuristic part (agent i heads for
  landmark i, braking on its velocity), :func:`collect` the seeded data collection.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np

ENV_ID = "claimbench/DimaSpread-v0"
N_ACTIONS = 5
MAX_N = 6


def make_parallel(n_agents: int, max_cycles: int, render_mode: str | None = None, local_ratio: float = 0.5):
    """The pinned simple_spread parallel env (discrete actions)."""
    if not 1 <= n_agents <= MAX_N:
        raise ValueError(f"n_agents must be in 1..{MAX_N}, got {n_agents}")
    if max_cycles < 1:
        raise ValueError(f"max_cycles must be >= 1, got {max_cycles}")
    from mpe2 import simple_spread_v3

    return simple_spread_v3.parallel_env(N=n_agents, max_cycles=max_cycles, local_ratio=local_ratio,
                                         continuous_actions=False, render_mode=render_mode)


def physical_state(par_env) -> np.ndarray:
    """[agent positions (2N), agent velocities (2N), landmark positions (2N)] as float64."""
    w = par_env.unwrapped.world
    pos = np.concatenate([a.state.p_pos for a in w.agents])
    vel = np.concatenate([a.state.p_vel for a in w.agents])
    lm = np.concatenate([lmk.state.p_pos for lmk in w.landmarks])
    return np.concatenate([pos, vel, lm]).astype(np.float64)


def split_state(s: np.ndarray, n: int):
    """(positions (..., n, 2), velocities (..., n, 2), landmarks (..., n, 2)) of a state array."""
    s = np.asarray(s)
    return (s[..., :2 * n].reshape(*s.shape[:-1], n, 2), s[..., 2 * n:4 * n].reshape(*s.shape[:-1], n, 2),
            s[..., 4 * n:6 * n].reshape(*s.shape[:-1], n, 2))


def heuristic_actions(s: np.ndarray, n: int, brake: float = 0.5) -> np.ndarray:
    """Agent i heads for landmark i: the axis with the larger (braked) displacement, its sign."""
    pos, vel, lm = split_state(s, n)
    d = lm - pos - brake * vel                                   # (..., n, 2)
    ax = np.abs(d[..., 1]) > np.abs(d[..., 0])                   # True: move along y
    sgn = np.where(ax, d[..., 1], d[..., 0]) > 0
    act = np.where(ax, np.where(sgn, 4, 3), np.where(sgn, 2, 1))
    return act.astype(np.int64)


def spread_reward(s: np.ndarray, n: int, local_ratio: float = 0.5, size: float = 0.15) -> np.ndarray:
    """simple_spread's per-agent reward averaged over agents, from the state (closed form)."""
    pos, _, lm = split_state(s, n)
    dist = np.linalg.norm(pos[..., None, :, :] - lm[..., :, None, :], axis=-1)   # (..., landmark, agent)
    glob = -dist.min(axis=-1).sum(axis=-1)
    pd = np.linalg.norm(pos[..., :, None, :] - pos[..., None, :, :], axis=-1)
    coll = (pd < 2 * size).sum(axis=(-1, -2)) - n                # ordered pairs, self excluded
    return (1 - local_ratio) * glob - local_ratio * coll / n


def collect(n_agents: int, max_cycles: int, episodes: int, seed: int, eps: float, progress: bool = False):
    """Episodes of the behaviour policy (per agent and step: random with probability ``eps``,
    else the heuristic). Returns a dict of arrays: s (T, D), a (T, N), r (T,), s2 (T, D), ep (T,),
    t (T,) in time order, one row per transition."""
    from tqdm import tqdm

    if not 0.0 <= eps <= 1.0:
        raise ValueError(f"eps must be in [0, 1], got {eps}")
    env = make_parallel(n_agents, max_cycles)
    rng = np.random.default_rng([seed, 11])
    rows = {k: [] for k in ("s", "a", "r", "s2", "ep", "t")}
    for e in tqdm(range(episodes), desc="dima: behaviour episodes", disable=not progress, mininterval=2):
        env.reset(seed=int(rng.integers(2**31)))
        s = physical_state(env)
        for t in range(max_cycles):
            a = heuristic_actions(s, n_agents)
            rand = rng.random(n_agents) < eps
            a = np.where(rand, rng.integers(0, N_ACTIONS, n_agents), a)
            _, rew, term, trunc, _ = env.step({ag: int(a[i]) for i, ag in enumerate(env.agents)})
            s2 = physical_state(env)
            for k, v in (("s", s), ("a", a), ("r", float(np.mean(list(rew.values())))), ("s2", s2), ("ep", e), ("t", t)):
                rows[k].append(v)
            s = s2
            if any(term.values()) or any(trunc.values()):
                break
    env.close()
    out = {k: np.asarray(v) for k, v in rows.items()}
    out["a"] = out["a"].astype(np.int64)
    return out


class SpreadCentralEnv(gym.Env):
    """Centralised single-agent view of simple_spread: one MultiDiscrete action for all agents."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, n_agents: int = 2, max_cycles: int = 25, render_mode: str | None = None,
                 local_ratio: float = 0.5):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.n = n_agents
        self.render_mode = render_mode
        self._par = make_parallel(n_agents, max_cycles, render_mode=render_mode, local_ratio=local_ratio)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(6 * n_agents,), dtype=np.float32)
        self.action_space = gym.spaces.MultiDiscrete([N_ACTIONS] * n_agents)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(2**31))
        self._par.reset(seed=seed)
        return physical_state(self._par).astype(np.float32), {}

    def step(self, action):
        action = np.asarray(action).reshape(-1)
        if action.shape != (self.n,) or not self.action_space.contains(action.astype(np.int64)):
            raise ValueError(f"action must be {self.n} integers in 0..{N_ACTIONS - 1}, got {action!r}")
        _, rew, term, trunc, _ = self._par.step({ag: int(action[i]) for i, ag in enumerate(self._par.agents)})
        obs = physical_state(self._par).astype(np.float32)
        return obs, float(np.mean(list(rew.values()))), bool(any(term.values())), bool(any(trunc.values())), {}

    def state(self) -> np.ndarray:
        return physical_state(self._par)

    def render(self):
        return self._par.render() if self.render_mode == "rgb_array" else None

    def close(self):
        self._par.close()


def register() -> None:
    """Register ``claimbench/DimaSpread-v0`` with gymnasium (idempotent)."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="stages.dima.env:SpreadCentralEnv")


register()
