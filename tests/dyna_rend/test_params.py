"""dyna_rend params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.dyna_rend.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("dyna_rend", PARAMS, real_params, profile=profile)
    assert p.prepare.n_pretrain == real_params["dyna_rend"][profile]["prepare"]["n_pretrain"]
    assert {"none", "dynarend"} <= set(p.train.arms)


def test_arms_must_include_none_and_dynarend(params_copy):
    params_copy["dyna_rend"]["default"]["train"]["arms"] = ["none", "mae2d"]
    assert "including none and dynarend" in params_error("dyna_rend", PARAMS, params_copy)


def test_unknown_camera(params_copy):
    params_copy["dyna_rend"]["default"]["train"]["cams_in"] = ["x+", "side"]
    assert "cams_in must be distinct cameras" in params_error("dyna_rend", PARAMS, params_copy)


def test_control_shorter_than_pretraining(params_copy):
    params_copy["dyna_rend"]["paper"]["train"]["control_steps"] = 30000
    assert "control_steps (30000) must be < pretrain_steps" in params_error("dyna_rend", PARAMS, params_copy)


def test_grid_bounds(params_copy):
    params_copy["dyna_rend"]["default"]["prepare"]["grid"] = [8, 8, 2]
    assert "grid must be [x, y, z]" in params_error("dyna_rend", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["dyna_rend"]["default"]["prepare"]["samples"] = 10
    msg = params_error("dyna_rend", PARAMS, params_copy)
    assert "dyna_rend.default.prepare.samples: unknown key" in msg and "n_pretrain" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.dyna_rend.prepare", {"dyna_rend.smoke.prepare.n_test": 3},
                               stage_env, python_exe)
    assert "dyna_rend.smoke.prepare.n_test = 3" in err and ">= 10" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.dyna_rend.train", "dvc repro stages/dyna_rend/dvc.yaml:dyna_rend-prepare",
                        stage_env, python_exe)
