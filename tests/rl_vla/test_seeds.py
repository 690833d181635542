"""A verdict seed is an independent repetition: its figures depend on that seed alone (not on which
seeds ran before it in the process), the same seed twice gives the same figures, another seed
other ones; the control's data is the RL arms' budget of fresh expert steps."""
from __future__ import annotations

import numpy as np
import pytest

from stages.common.runtime.params import load_study
from stages.rl_vla.params import PARAMS


@pytest.fixture(scope="module")
def smoke():
    p = load_study("rl_vla", PARAMS, profile="smoke")[1]
    return p.model_copy(update={"prepare": p.prepare.model_copy(update={"n_eval": 12})})


def run(p, seed):
    from stages.common.device import limit_threads
    from stages.rl_vla.evaluate import evaluate_seed
    from stages.rl_vla.prepare import prepare_seed
    from stages.rl_vla.train import train_seed

    limit_threads()
    data, more, episodes, _ = prepare_seed(p, seed)
    policies, _, _ = train_seed(p, data, more, seed)
    succ = evaluate_seed(policies, episodes, p, seed, splits=("train", "semantic"))
    weights = {m: np.concatenate([v.detach().numpy().ravel() for v in pol.state_dict().values()])
               for m, pol in policies.items()}
    return succ, weights


def test_a_seeds_figures_depend_on_that_seed_alone(smoke):
    run(smoke, 0)                                   # seed 0 first, as the stage runs [0, 1]
    after, w_after = run(smoke, 1)
    alone, w_alone = run(smoke, 1)                  # seed 1 again, after another seed 1
    other, w_other = run(smoke, 2)
    for m in w_after:
        assert np.array_equal(w_after[m], w_alone[m]), m
        assert not np.array_equal(w_after[m], w_other[m]), m
        for s in after[m]:
            assert np.array_equal(after[m][s], alone[m][s]), (m, s)


def test_control_data_is_the_rl_budget_of_fresh_expert_steps(smoke):
    from stages.rl_vla.env import PickPlaceEnv, episode_spec
    from stages.rl_vla.data import demo_seed0, more_demos, more_seed0

    more, n = more_demos(smoke, 3)
    assert len(more["action"]) >= smoke.prepare.more_demo_steps == smoke.train.ppo.env_steps
    env = PickPlaceEnv(**smoke.env.model_dump())
    spec = lambda s: (env.reset(seed=s), episode_spec(env.ep))[1]   # noqa: E731
    assert not set(range(more_seed0(3), more_seed0(3) + n)) & set(range(demo_seed0(3), demo_seed0(3) + smoke.prepare.n_demos))
    assert len({spec(s) for s in range(more_seed0(3), more_seed0(3) + 8)}) > 1
