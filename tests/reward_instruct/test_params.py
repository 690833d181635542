"""reward_instruct params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.reward_instruct.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("reward_instruct", PARAMS, real_params, profile=profile)
    assert p.train.gen_steps == real_params["reward_instruct"][profile]["train"]["gen_steps"]


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


def test_unknown_key_lists_allowed(params_copy):
    params_copy["reward_instruct"]["default"]["prepare"]["samples"] = 10
    msg = params_error("reward_instruct", PARAMS, params_copy)
    assert "reward_instruct.default.prepare.samples: unknown key" in msg and "teacher_steps" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.reward_instruct.prepare", {"reward_instruct.smoke.prepare.n_reward": 3},
                               stage_env, python_exe)
    assert "reward_instruct.smoke.prepare.n_reward = 3" in err and ">= 100" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.reward_instruct.train", "dvc repro stages/reward_instruct/dvc.yaml:reward_instruct-prepare",
                        stage_env, python_exe)
