"""dima's environment: pettingzoo's parallel API test, gymnasium's checker, seeding, rendering,
the reward in closed form and the physics against a hand-written integrator (N=1)."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from stages.dima.env import (ENV_ID, SpreadCentralEnv, collect, heuristic_actions, make_parallel, physical_state,
                             spread_reward)


def test_parallel_api():
    from pettingzoo.test import parallel_api_test

    parallel_api_test(make_parallel(2, 10), num_cycles=20)


def test_gymnasium_checker_and_registration():
    from gymnasium.utils.env_checker import check_env

    env = gym.make(ENV_ID, n_agents=2, max_cycles=10)
    check_env(env.unwrapped, skip_render_check=True)
    assert env.action_space == gym.spaces.MultiDiscrete([5, 5]) and env.observation_space.shape == (12,)


def test_same_seed_same_episode():
    def episode(seed):
        env = SpreadCentralEnv(2, 8)
        obs, _ = env.reset(seed=seed)
        out, rng = [obs], np.random.default_rng(0)
        for _ in range(8):
            obs, r, term, trunc, _ = env.step(rng.integers(0, 5, 2))
            out.append(np.append(obs, r))
        return np.concatenate(out)

    assert np.array_equal(episode(3), episode(3)) and not np.array_equal(episode(3), episode(4))
    a, b = collect(2, 5, 3, seed=1, eps=0.5), collect(2, 5, 3, seed=1, eps=0.5)
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_render_rgb_array():
    env = SpreadCentralEnv(2, 5, render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.ndim == 3 and img.shape[2] == 3 and img.dtype == np.uint8 and img.std() > 0


def test_reward_matches_closed_form():
    env = make_parallel(2, 25)
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(25):
        _, rew, *_ = env.step({ag: int(rng.integers(5)) for ag in env.agents})
        assert np.isclose(np.mean(list(rew.values())), spread_reward(physical_state(env), 2))


def test_one_agent_physics_by_hand():
    """N=1 has no collisions: velocity damps by 0.25 and gains 0.5 per unit push, the position
    moves by dt times the velocity before the step (checked step by step on random actions)."""
    env = make_parallel(1, 25)
    env.reset(seed=2)
    rng = np.random.default_rng(1)
    push = {0: (0, 0), 1: (-1, 0), 2: (1, 0), 3: (0, -1), 4: (0, 1)}
    for _ in range(25):
        s = physical_state(env)
        a = int(rng.integers(5))
        env.step({"agent_0": a})
        s2 = physical_state(env)
        assert np.allclose(s2[2:4], 0.75 * s[2:4] + 0.5 * np.array(push[a]))
        assert np.allclose(s2[:2], s[:2] + 0.1 * s[2:4]) and np.allclose(s2[4:], s[4:])


def test_heuristic_heads_for_its_landmark():
    # agent 0 at the origin, landmark 0 to the right; agent 1 at the origin, landmark 1 below
    s = np.array([0, 0, 0, 0, 0, 0, 0, 0, 1.0, 0.1, 0.1, -1.0])
    assert heuristic_actions(s, 2).tolist() == [2, 3]


def test_bad_inputs():
    with pytest.raises(ValueError, match="n_agents must be in 1..6"):
        make_parallel(0, 10)
    with pytest.raises(ValueError, match="render_mode must be None or 'rgb_array'"):
        SpreadCentralEnv(2, 5, render_mode="human")
    env = SpreadCentralEnv(2, 5)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must be 2 integers in 0..4"):
        env.step([1, 7])
    with pytest.raises(ValueError, match="eps must be in"):
        collect(2, 5, 1, seed=0, eps=1.5)
