"""rl_vla's environment: gymnasium's checker, seeding, the splits' disjointness, the expert, rendering."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from stages.rl_vla.env import ENV_ID, HELDOUT_PAIRS, SPLITS, TRAIN_PAIRS, PickPlaceEnv, episode_spec


def test_check_env_passes():
    check_env(gym.make(ENV_ID).unwrapped, skip_render_check=False)


def play(env, seed, actions):
    obs, _ = env.reset(seed=seed)
    frames = [obs["image"].copy()]
    for a in actions:
        obs, *_ = env.step(a)
        frames.append(obs["image"].copy())
    return np.stack(frames), env.ep


def test_same_seed_same_episode_other_seed_other():
    acts = [3, 1, 1, 4, 0, 2, 5, 1, 1]
    a, ep_a = play(PickPlaceEnv(split="execution", action_noise=0.2), 5, acts)
    b, ep_b = play(PickPlaceEnv(split="execution", action_noise=0.2), 5, acts)
    c, _ = play(PickPlaceEnv(split="execution", action_noise=0.2), 6, acts)
    assert ep_a == ep_b and np.array_equal(a, b) and not np.array_equal(a, c)


def test_splits_are_disjoint_from_training():
    train = {episode_spec(_ep("train", s)) for s in range(400)}
    for split in SPLITS[1:]:
        specs = {episode_spec(_ep(split, s)) for s in range(200)}
        assert not specs & train, split
    assert not set(HELDOUT_PAIRS) & set(TRAIN_PAIRS) and len(TRAIN_PAIRS) == 8


def _ep(split, seed):
    env = PickPlaceEnv(split=split)
    env.reset(seed=seed)
    return env.ep


@pytest.mark.parametrize("split", SPLITS)
def test_expert_solves_every_split(split):
    env = PickPlaceEnv(split=split)
    for s in range(20):
        env.reset(seed=s)
        done = False
        while not done:
            _, r, term, trunc, _ = env.step(env.expert_action())
            done = term or trunc
        assert r == 1.0


def test_wrong_plate_ends_the_episode_without_reward():
    env = PickPlaceEnv()
    env.reset(seed=0)
    env.held, env.gripper = env.ep["block"], env.ep["plates"][env.ep["d_plate"]]
    del env.blocks[env.ep["block"]]
    _, r, term, _, info = env.step(5)
    assert term and r == 0.0 and not info["success"]


def test_render_and_wrist_view_shapes():
    env = PickPlaceEnv(render_mode="rgb_array")
    obs, _ = env.reset(seed=1)
    assert env.render().shape == (6 * 6 * 4, 6 * 6 * 4, 3)
    assert obs["image"].shape == (3, 11 * 6, 11 * 6)
    centre = obs["image"][:, 5 * 6, 5 * 6]
    assert tuple(centre) == (255, 255, 255)             # the open gripper sits in the centre cell


@pytest.mark.parametrize("kwargs, message", [
    ({"split": "moon"}, "split must be one of"), ({"grid": 3}, "grid must be in"), ({"cell": 4}, "cell must be >= 6"),
    ({"action_noise": 1.0}, "action_noise must be in"), ({"render_mode": "human"}, "render_mode must be"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PickPlaceEnv(**kwargs)


def test_step_before_reset_and_bad_action():
    env = PickPlaceEnv()
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must be in"):
        env.step(7)
