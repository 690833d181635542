"""The gymnasium environment: gymnasium's checker passes for every variant, a seed fixes the
episode, rendering gives an RGB picture, the registered id works, bad inputs are named."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from stages.labyrinth.env import ENV_ID, LabyrinthEnv
from stages.labyrinth.maze import VARIANTS


@pytest.mark.parametrize("variant", VARIANTS)
def test_check_env_passes(variant):
    check_env(LabyrinthEnv(n=5, variant=variant, render_mode="rgb_array"), skip_render_check=False)


def test_same_seed_same_episode():
    def episode(seed):
        env = gym.make(ENV_ID, n=6, variant="key_door")
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        out = [obs]
        for _ in range(30):
            obs, r, term, trunc, _ = env.step(env.action_space.sample())
            out.append(obs * (1 + r))
            if term or trunc:
                break
        return np.stack(out)

    assert np.array_equal(episode(4), episode(4)) and not np.array_equal(episode(4), episode(5))


def test_rewards_and_termination_follow_the_official_values():
    from stages.labyrinth.imitate import Task
    env = LabyrinthEnv(n=5, variant="ice")
    obs, info = env.reset(seed=1)
    t = Task.of(env.maze)
    cell = env.maze.start
    # step onto ice if a neighbour is ice: -100 and terminated; else walk the expert to +1
    for _ in range(100):
        obs, r, term, trunc, info = env.step(t.optimal(info["cell"], info["has_key"])[0])
        if term:
            break
        assert r == pytest.approx(-0.1 / 25)
    assert term and r == 1.0 and not trunc
    env.reset(seed=1)
    ice = env.maze.ice[0]
    env.cell = ice                                                   # stand next to it and step on
    for a, (dr, dc) in enumerate(((-1, 0), (0, 1), (1, 0), (0, -1))):
        back = (ice[0] - dr, ice[1] - dc)
        if 0 <= back[0] < 5 and 0 <= back[1] < 5 and env.maze.is_open(back, a):
            env.cell = back
            _, r, term, _, _ = env.step(a)
            assert r == -100.0 and term
            break
    del cell


def test_truncation_and_render():
    env = gym.make(ENV_ID, n=4, max_steps=3, render_mode="rgb_array")
    env.reset(seed=0)
    env.unwrapped.cell = (0, 0)
    truncs = [env.step(3)[3] for _ in range(3)]                      # left into the border wall
    assert truncs == [False, False, True]
    img = env.render()
    assert img.shape == (65, 65, 3) and img.dtype == np.uint8


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="variant must be one of"):
        LabyrinthEnv(variant="lava")
    with pytest.raises(ValueError, match="render_mode must be"):
        LabyrinthEnv(render_mode="human")
    env = LabyrinthEnv(n=4)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must be in 0..3"):
        env.step(9)
