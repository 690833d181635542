"""reward_instruct params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.reward_instruct.params import PARAMS
from tests.helpers import params_error


def test_checkpoint_interval_must_divide_steps(params_copy):
    params_copy["reward_instruct"]["default"]["train"]["gentle"]["every"] = 7
    assert "every (7) must divide steps (300)" in params_error("reward_instruct", PARAMS, params_copy)


def test_generator_must_take_fewer_steps_than_teacher(params_copy):
    params_copy["reward_instruct"]["default"]["train"]["gen_steps"] = 50
    assert "must be below teacher_eval_steps" in params_error("reward_instruct", PARAMS, params_copy)


def test_grid_must_fit_the_samples(params_copy):
    params_copy["reward_instruct"]["paper"]["evaluate"]["grid_per_class"] = 20
    params_copy["reward_instruct"]["paper"]["train"]["per_class"] = 10
    assert "must be <= train.per_class" in params_error("reward_instruct", PARAMS, params_copy)
