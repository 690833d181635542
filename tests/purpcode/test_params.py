"""purpcode params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.purpcode.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("purpcode", PARAMS, real_params, profile=profile)
    assert p.prepare.per_prompt == real_params["purpcode"][profile]["prepare"]["per_prompt"]


def test_skip_only_informational_ids(params_copy):
    params_copy["purpcode"]["default"]["prepare"]["skip"] = ["B404", "B602"]
    assert "skip may hold only bandit's informational ids" in params_error("purpcode", PARAMS, params_copy)


def test_heads_must_divide_width(params_copy):
    params_copy["purpcode"]["paper"]["train"]["model"]["heads"] = 5
    assert "must be a multiple of heads" in params_error("purpcode", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["purpcode"]["default"]["prepare"]["samples"] = 10
    msg = params_error("purpcode", PARAMS, params_copy)
    assert "purpcode.default.prepare.samples: unknown key" in msg and "per_prompt" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.purpcode.prepare", {"purpcode.smoke.prepare.test_frac": 1.5},
                               stage_env, python_exe)
    assert "purpcode.smoke.prepare.test_frac = 1.5" in err and "< 1" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.purpcode.train", "dvc repro stages/purpcode/dvc.yaml:purpcode-prepare",
                        stage_env, python_exe)
