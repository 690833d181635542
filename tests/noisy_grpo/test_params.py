"""noisy_grpo params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.noisy_grpo.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("noisy_grpo", PARAMS, real_params, profile=profile)
    assert p.prepare.n_train == real_params["noisy_grpo"][profile]["prepare"]["n_train"]


def test_grid_must_hold_the_objects(params_copy):
    params_copy["noisy_grpo"]["default"]["prepare"]["grid"] = 3
    params_copy["noisy_grpo"]["default"]["prepare"]["max_per_colour"] = 4
    assert "cannot hold 3 x 4 objects" in params_error("noisy_grpo", PARAMS, params_copy)


def test_ood_dim_must_be_inside_01(params_copy):
    params_copy["noisy_grpo"]["default"]["prepare"]["ood_dim"] = [0.5, 1.0]
    assert "ood_dim must satisfy" in params_error("noisy_grpo", PARAMS, params_copy)


def test_noise_is_required(params_copy):
    params_copy["noisy_grpo"]["paper"]["train"]["sigma_start"] = 0.0
    params_copy["noisy_grpo"]["paper"]["train"]["sigma_end"] = 0.0
    assert "NoisyGRPO needs noise" in params_error("noisy_grpo", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["noisy_grpo"]["default"]["prepare"]["samples"] = 10
    msg = params_error("noisy_grpo", PARAMS, params_copy)
    assert "noisy_grpo.default.prepare.samples: unknown key" in msg and "n_train" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.noisy_grpo.prepare", {"noisy_grpo.smoke.prepare.n_train": 3},
                               stage_env, python_exe)
    assert "noisy_grpo.smoke.prepare.n_train = 3" in err and ">= 10" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.noisy_grpo.train", "dvc repro stages/noisy_grpo/dvc.yaml:noisy_grpo-prepare",
                        stage_env, python_exe)
