"""rl_vla params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.rl_vla.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("rl_vla", PARAMS, real_params, profile=profile)
    assert p.prepare.n_demos == real_params["rl_vla"][profile]["prepare"]["n_demos"]


def test_rl_methods_share_one_budget(params_copy):
    params_copy["rl_vla"]["default"]["train"]["grpo"]["env_steps"] = 12345
    assert "ppo, grpo and dpo must get the same env_steps" in params_error("rl_vla", PARAMS, params_copy)


def test_ppo_batch_fits_a_rollout(params_copy):
    params_copy["rl_vla"]["paper"]["train"]["ppo"]["batch"] = 10**6
    assert "must be <= n_envs * n_steps" in params_error("rl_vla", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["rl_vla"]["default"]["prepare"]["samples"] = 10
    msg = params_error("rl_vla", PARAMS, params_copy)
    assert "rl_vla.default.prepare.samples: unknown key" in msg and "n_demos" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.rl_vla.prepare", {"rl_vla.smoke.prepare.n_demos": 3},
                               stage_env, python_exe)
    assert "rl_vla.smoke.prepare.n_demos = 3" in err and ">= 4" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.rl_vla.train", "dvc repro stages/rl_vla/dvc.yaml:rl_vla-prepare",
                        stage_env, python_exe)
