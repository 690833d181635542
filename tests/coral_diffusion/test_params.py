"""coral_diffusion params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.coral_diffusion.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("coral_diffusion", PARAMS, real_params, profile=profile)
    assert p.train.steps == real_params["coral_diffusion"][profile]["train"]["steps"]
    assert not set(p.evaluate.head) & set(p.evaluate.tail)


def test_head_and_tail_must_be_disjoint(params_copy):
    params_copy["coral_diffusion"]["default"]["evaluate"]["tail"] = [2, 8, 9]
    assert "must not share classes" in params_error("coral_diffusion", PARAMS, params_copy)


def test_classes_must_be_digits(params_copy):
    params_copy["coral_diffusion"]["default"]["evaluate"]["head"] = [0, 10]
    assert "classes must be distinct digits 0..9" in params_error("coral_diffusion", PARAMS, params_copy)


def test_sample_steps_at_most_T(params_copy):
    params_copy["coral_diffusion"]["paper"]["evaluate"]["sample_steps"] = 5000
    assert "must be <= train.T" in params_error("coral_diffusion", PARAMS, params_copy)


def test_long_tail_must_fit_the_smallest_class(params_copy):
    params_copy["coral_diffusion"]["default"]["prepare"]["n_max"] = 150
    assert "exceeds 174" in params_error("coral_diffusion", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["coral_diffusion"]["default"]["train"]["epochs"] = 10
    msg = params_error("coral_diffusion", PARAMS, params_copy)
    assert "coral_diffusion.default.train.epochs: unknown key" in msg and "steps" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.coral_diffusion.prepare",
                               {"coral_diffusion.smoke.prepare.ratio": 0.5}, stage_env, python_exe)
    assert "coral_diffusion.smoke.prepare.ratio = 0.5" in err and ">= 1" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.coral_diffusion.train",
                        "dvc repro stages/coral_diffusion/dvc.yaml:coral_diffusion-prepare", stage_env, python_exe)
