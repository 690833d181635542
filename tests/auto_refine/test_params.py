"""auto_refine params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.auto_refine.params import PARAMS
from stages.common.params import PROFILES, load_study
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("auto_refine", PARAMS, real_params, profile=profile)
    assert p.prepare.n_people == real_params["auto_refine"][profile]["prepare"]["n_people"]


def test_group_needs_two_samples(params_copy):
    params_copy["auto_refine"]["default"]["train"]["group"] = 1
    assert "auto_refine.default.train.group = 1" in params_error("auto_refine", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["auto_refine"]["default"]["prepare"]["samples"] = 10
    msg = params_error("auto_refine", PARAMS, params_copy)
    assert "auto_refine.default.prepare.samples: unknown key" in msg and "n_people" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.auto_refine.prepare", {"auto_refine.smoke.prepare.n_people": 3},
                               stage_env, python_exe)
    assert "auto_refine.smoke.prepare.n_people = 3" in err and ">= 8" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.auto_refine.train", "dvc repro stages/auto_refine/dvc.yaml:auto_refine-prepare",
                        stage_env, python_exe)
