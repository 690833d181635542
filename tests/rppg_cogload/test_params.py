"""rppg_cogload params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.rppg_cogload.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("rppg_cogload", PARAMS, real_params, profile=profile)
    assert p.prepare.participants == real_params["rppg_cogload"][profile]["prepare"]["participants"]
    assert p.train.classifiers[0] == "lr"


def test_classifiers_must_start_with_lr(params_copy):
    params_copy["rppg_cogload"]["default"]["train"]["classifiers"] = ["svm", "lr"]
    assert "classifiers must start with 'lr'" in params_error("rppg_cogload", PARAMS, params_copy)


def test_unknown_classifier_is_refused(params_copy):
    params_copy["rppg_cogload"]["default"]["train"]["classifiers"] = ["lr", "xgboost"]
    msg = params_error("rppg_cogload", PARAMS, params_copy)
    assert "rppg_cogload.default.train.classifiers" in msg and "xgboost" in msg


def test_fewer_participants_than_folds(params_copy):
    params_copy["rppg_cogload"]["paper"]["train"]["folds"] = 5
    params_copy["rppg_cogload"]["paper"]["prepare"]["participants"] = 4
    assert "must be at least train.folds" in params_error("rppg_cogload", PARAMS, params_copy)


def test_shared_share_above_one(params_copy):
    params_copy["rppg_cogload"]["default"]["prepare"]["shared_noise"]["noise_shared"] = 1.5
    msg = params_error("rppg_cogload", PARAMS, params_copy)
    assert "rppg_cogload.default.prepare.shared_noise.noise_shared" in msg and "1" in msg


def test_unknown_key_lists_allowed(params_copy):
    params_copy["rppg_cogload"]["default"]["prepare"]["samples"] = 10
    msg = params_error("rppg_cogload", PARAMS, params_copy)
    assert "rppg_cogload.default.prepare.samples: unknown key" in msg and "participants" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.rppg_cogload.prepare", {"rppg_cogload.smoke.prepare.participants": 3},
                               stage_env, python_exe)
    assert "rppg_cogload.smoke.prepare.participants = 3" in err and ">= 4" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.rppg_cogload.train", "dvc repro stages/rppg_cogload/dvc.yaml:rppg_cogload-prepare",
                        stage_env, python_exe)
