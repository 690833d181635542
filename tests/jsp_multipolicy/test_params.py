"""jsp_multipolicy params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.jsp_multipolicy.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("jsp_multipolicy", PARAMS, real_params, profile=profile)
    assert p.train.steps == real_params["jsp_multipolicy"][profile]["train"]["steps"]
    assert p.train.samples == p.evaluate.samples    # the same sampling budget in training and test


def test_samples_must_split_over_policies(params_copy):
    params_copy["jsp_multipolicy"]["default"]["evaluate"]["samples"] = 30
    assert "evaluate.samples (30) must be a multiple of train.n_policies (4)" in params_error(
        "jsp_multipolicy", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["jsp_multipolicy"]["default"]["prepare"]["samples"] = 10
    msg = params_error("jsp_multipolicy", PARAMS, params_copy)
    assert "jsp_multipolicy.default.prepare.samples: unknown key" in msg and "n_test_10" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.jsp_multipolicy.prepare", {"jsp_multipolicy.smoke.prepare.workers": 3},
                               stage_env, python_exe)
    assert "jsp_multipolicy.smoke.prepare.workers = 3" in err and "<= 2" in err


def test_evaluate_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.jsp_multipolicy.evaluate",
                        "dvc repro stages/jsp_multipolicy/dvc.yaml:jsp_multipolicy-prepare", stage_env, python_exe)
