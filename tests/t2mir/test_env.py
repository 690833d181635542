"""DarkRoom: gymnasium's checker, seeding, the closed-form optimal action, bad inputs."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from stages.t2mir.env import ENV_ID, DarkRoom, optimal_action, optimal_actions, oracle_return


def test_check_env_passes():
    check_env(gym.make(ENV_ID, size=5, goal=(2, 3)).unwrapped, skip_render_check=False)


def test_same_seed_same_episode():
    def episode(seed):
        env = gym.make(ENV_ID, size=6, goal=(1, 4), horizon=15)
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        out = [obs]
        for _ in range(15):
            obs, *_ = env.step(env.action_space.sample())
            out.append(obs)
        return np.array(out)
    assert np.array_equal(episode(3), episode(3))
    assert not np.array_equal(episode(3), episode(4))


def test_optimal_policy_reaches_goal_in_manhattan_steps_and_earns_oracle_return():
    rng = np.random.default_rng(0)
    for _ in range(20):
        goal, start = rng.integers(0, 7, 2), rng.integers(0, 7, 2)
        env = DarkRoom(size=7, goal=goal, horizon=20)
        obs, _ = env.reset(options={"start": start})
        total = 0.0
        for _ in range(20):
            obs, r, term, trunc, _ = env.step(optimal_action(obs, goal))
            total += r
        assert total == oracle_return(start, goal, 20)
    # by hand: from (0,0) to (2,1): +x, +x, +y, then stay
    assert [optimal_action(s, (2, 1)) for s in [(0, 0), (1, 0), (2, 0), (2, 1)]] == [0, 0, 2, 4]
    s, g = rng.integers(0, 7, (50, 2)), rng.integers(0, 7, (50, 2))
    assert optimal_actions(s, g).tolist() == [optimal_action(a, b) for a, b in zip(s, g)]


def test_render_shows_agent_and_goal():
    env = DarkRoom(size=4, goal=(3, 3), render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.shape == (96, 96, 3) and img.dtype == np.uint8
    assert (img == [40, 200, 60]).all(-1).any() and (img == [230, 60, 50]).all(-1).any()


@pytest.mark.parametrize("kw, msg", [({"size": 1}, "size must be"), ({"goal": (9, 0)}, "goal must be"),
                                     ({"horizon": 0}, "horizon must be"), ({"render_mode": "human"}, "render_mode")])
def test_bad_inputs(kw, msg):
    with pytest.raises(ValueError, match=msg):
        DarkRoom(**kw)
