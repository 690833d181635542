"""webdancer's website world: gymnasium's checker, seeding, the tree by hand, the oracle, the
rejection sampling, rendering, and the held-out data's disjointness."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from stages.webdancer.web import (ENV_ID, Batch, Layout, WebEnv, breadcrumb, make_questions, make_sites,
                                  oracle_actions, render_site, sample_trajectories, tree)


def test_check_env_passes():
    check_env(gym.make(ENV_ID).unwrapped, skip_render_check=False)


def test_tree_by_hand():
    children, parent, depth = tree(2, 2)
    assert children.tolist() == [[1, 2], [3, 4], [5, 6], [-1, -1], [-1, -1], [-1, -1], [-1, -1]]
    assert parent.tolist() == [-1, 0, 0, 1, 1, 2, 2] and depth.tolist() == [0, 1, 1, 2, 2, 2, 2]


def test_observation_and_steps_by_hand():
    lay = Layout(2, 2, 4, 3)
    sites = {"label": np.array([[-1, 2, 0, 1, 3, 3, 1]]), "value": np.array([[0, 1, 2, 0, 1, 2, 2]])}
    q = make_questions(lay, sites, np.array([0]), np.array([2]), np.random.default_rng(0))
    q["target"][:] = 4
    q["answer"][:] = sites["value"][0, 4]                   # the fact on home > 2 > 3 is 1
    b = Batch(lay, sites, q, np.array([0]), 5)
    t = lay.topic0
    # question (2, 3), empty breadcrumb, links (2, 0), fact 0
    assert b.obs()[0].tolist() == [2 + t, 3 + t, 0, 0, 2 + t, 0 + t, lay.value0 + 0]
    b.step(np.array([1]))                                   # click link 1 (topic 0): a distractor
    assert b.obs()[0].tolist() == [2 + t, 3 + t, 0 + t, 0, 3 + t, 1 + t, lay.value0 + 2]
    b.step(np.array([lay.back]))
    b.step(np.array([0]))
    b.step(np.array([1]))                                   # home > 2 > 3: page 4
    assert b.page[0] == 4 and breadcrumb(lay, sites["label"][0], 4) == [2, 3]
    b.step(np.array([lay.answer0 + 1]))
    assert b.done[0] and b.reward[0] == 1.0 and b.steps[0] == 5


def test_oracle_answers_every_question_in_the_fewest_steps():
    lay = Layout(3, 3, 12, 8)
    rng = np.random.default_rng(1)
    sites = make_sites(lay, 20, rng)
    q = make_questions(lay, sites, np.arange(20), rng.integers(1, 4, size=20), rng)
    b = Batch(lay, sites, q, np.arange(20), 10)
    while not b.done.all():
        b.step(np.array([oracle_actions(lay, b.label[j], b.value[j], int(b.target[j]), int(b.page[j])) for j in range(20)]))
    assert (b.reward == 1).all() and np.array_equal(b.steps, q["depth"] + 1)


def test_rejection_sampling_keeps_only_correct_trajectories():
    lay = Layout(3, 2, 8, 4)
    rng = np.random.default_rng(2)
    sites = make_sites(lay, 30, rng)
    q = make_questions(lay, sites, np.arange(30), rng.integers(1, 3, size=30), rng)
    obs, act, info = sample_trajectories(lay, sites, q, 0.3, 0.5, 8, rng)
    assert 0 < info["kept"] < info["sampled"] and len(obs) == len(act) == info["steps"]
    clean = sample_trajectories(lay, sites, q, 0.0, 0.0, 8, rng)[2]
    assert clean["kept"] == 30 and clean["steps"] == int((q["depth"] + 1).sum())


def test_same_seed_same_episode_other_seed_other():
    def play(seed):
        env = WebEnv()
        obs, info = env.reset(seed=seed)
        out = [obs]
        for a in (0, 1, 3, 2):
            obs, r, term, trunc, _ = env.step(a)
            out.append(obs)
            if term or trunc:
                break
        return np.stack(out)
    assert np.array_equal(play(5), play(5)) and not np.array_equal(play(5), play(6))


def test_render_and_bad_inputs():
    env = WebEnv(render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3 and img.max() == 255
    assert render_site(env.lay, env.b.label[0], 0, 1).shape == img.shape
    with pytest.raises(ValueError, match="render_mode must be None or 'rgb_array'"):
        WebEnv(render_mode="human")
    with pytest.raises(ValueError, match="n_topics >= k"):
        Layout(4, 2, 3, 4)
    with pytest.raises(RuntimeError, match="call reset"):
        WebEnv().step(0)


def test_prepared_data_is_disjoint():
    from stages.webdancer.params import EnvParams, PrepareStep
    from stages.webdancer.prepare import build

    env = EnvParams(k=3, depth=3, n_topics=12, n_values=8, max_steps=10)
    p = PrepareStep(train_sites=20, test_sites=10, n_sft=30, n_rl=40, n_test_per_depth=5, noise=0.1, wrong_answer=0.1)
    d = build(env, p, 0)
    train = {a.tobytes() for a in d["train_label"]}
    assert not any(a.tobytes() in train for a in d["test_label"])
    sft = set(zip(d["sft_site"].tolist(), d["sft_target"].tolist()))
    assert not sft & set(zip(d["rl_site"].tolist(), d["rl_target"].tolist()))
    assert np.bincount(d["test_depth"]).tolist() == [0, 5, 5, 5]
