"""diff_purify params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.diff_purify.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("diff_purify", PARAMS, real_params, profile=profile)
    assert p.evaluate.main_eps == real_params["diff_purify"][profile]["evaluate"]["main_eps"]


def test_main_eps_must_be_attacked(params_copy):
    params_copy["diff_purify"]["default"]["evaluate"]["main_eps"] = 0.3
    assert "main_eps (0.3) must be one of eps" in params_error("diff_purify", PARAMS, params_copy)


def test_eps_must_increase(params_copy):
    params_copy["diff_purify"]["default"]["evaluate"]["eps"] = [0.1, 0.05]
    assert "eps must be increasing" in params_error("diff_purify", PARAMS, params_copy)


def test_sigmas_ordered(params_copy):
    params_copy["diff_purify"]["paper"]["train"]["prior_sigmas"] = [1.0, 0.1]
    assert "prior_sigmas must be [min, max]" in params_error("diff_purify", PARAMS, params_copy)
    params_copy["diff_purify"]["paper"]["train"]["prior_sigmas"] = [0.1, 1.0]
    params_copy["diff_purify"]["paper"]["purify"]["sigma_min"] = 2.0
    assert "sigma_min (2.0) must be <= sigma_max" in params_error("diff_purify", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["diff_purify"]["default"]["purify"]["samples"] = 10
    msg = params_error("diff_purify", PARAMS, params_copy)
    assert "diff_purify.default.purify.samples: unknown key" in msg and "sigma_max" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.diff_purify.prepare", {"diff_purify.smoke.prepare.test_fraction": 0.01},
                               stage_env, python_exe)
    assert "diff_purify.smoke.prepare.test_fraction = 0.01" in err and "0.05" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.diff_purify.train", "dvc repro stages/diff_purify/dvc.yaml:diff_purify-prepare",
                        stage_env, python_exe)
