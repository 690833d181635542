"""mpo params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.mpo.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("mpo", PARAMS, real_params, profile=profile)
    assert p.prepare.pairs == real_params["mpo"][profile]["prepare"]["pairs"]


def test_flips_must_start_clean_and_increase(params_copy):
    params_copy["mpo"]["default"]["prepare"]["flips"] = [0.2, 0.3]
    assert "flips must start at 0, increase strictly" in params_error("mpo", PARAMS, params_copy)


def test_target_flip_must_be_a_flip(params_copy):
    params_copy["mpo"]["paper"]["prepare"]["target_flip"] = 0.25
    assert "must be one of flips" in params_error("mpo", PARAMS, params_copy)


def test_dpo_grid_needs_beta_one(params_copy):
    params_copy["mpo"]["smoke"]["train"]["dpo_betas"] = [0.3]
    assert "dpo_betas must contain 1.0" in params_error("mpo", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["mpo"]["default"]["prepare"]["samples"] = 10
    msg = params_error("mpo", PARAMS, params_copy)
    assert "mpo.default.prepare.samples: unknown key" in msg and "pairs" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.mpo.prepare", {"mpo.smoke.prepare.pairs": 3},
                               stage_env, python_exe)
    assert "mpo.smoke.prepare.pairs = 3" in err and ">= 10" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.mpo.train", "dvc repro stages/mpo/dvc.yaml:mpo-prepare",
                        stage_env, python_exe)
