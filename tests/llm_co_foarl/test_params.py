"""llm_co_foarl params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.llm_co_foarl.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("llm_co_foarl", PARAMS, real_params, profile=profile)
    assert p.prepare.n_train == real_params["llm_co_foarl"][profile]["prepare"]["n_train"]


def test_heads_must_divide_d_model(params_copy):
    params_copy["llm_co_foarl"]["default"]["train"]["heads"] = 3
    assert "must be a multiple of heads" in params_error("llm_co_foarl", PARAMS, params_copy)


def test_group_needs_two_samples(params_copy):
    params_copy["llm_co_foarl"]["paper"]["train"]["rl_group"] = 1
    msg = params_error("llm_co_foarl", PARAMS, params_copy)
    assert "llm_co_foarl.paper.train.rl_group" in msg and ">= 2" in msg


def test_knapsack_size_is_bounded_by_the_number_tokens(params_copy):
    params_copy["llm_co_foarl"]["default"]["prepare"]["size"]["kp"] = 40
    assert "<= 20" in params_error("llm_co_foarl", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["llm_co_foarl"]["default"]["prepare"]["samples"] = 10
    msg = params_error("llm_co_foarl", PARAMS, params_copy)
    assert "llm_co_foarl.default.prepare.samples: unknown key" in msg and "n_train" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.llm_co_foarl.prepare", {"llm_co_foarl.smoke.prepare.n_train": 3},
                               stage_env, python_exe)
    assert "llm_co_foarl.smoke.prepare.n_train = 3" in err and ">= 10" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.llm_co_foarl.train", "dvc repro stages/llm_co_foarl/dvc.yaml:llm_co_foarl-prepare",
                        stage_env, python_exe)
