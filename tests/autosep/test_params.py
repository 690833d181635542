"""autosep params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.autosep.params import PARAMS
from stages.common.params import PROFILES, load_study
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("autosep", PARAMS, real_params, profile=profile)
    assert p.prepare.repeats == real_params["autosep"][profile]["prepare"]["repeats"]


def test_finer_block_must_be_finer(params_copy):
    params_copy["autosep"]["default"]["train"]["blackbox"]["block"] = 2
    assert "must be finer (smaller) than train.blackbox.block" in params_error("autosep", PARAMS, params_copy)


def test_blind_noise_must_exceed_compare_noise(params_copy):
    params_copy["autosep"]["paper"]["train"]["ablations"]["blind_compare_noise"] = 0.5
    assert "must exceed train.blackbox.compare_noise" in params_error("autosep", PARAMS, params_copy)


def test_label_edit_names_the_choices(params_copy):
    params_copy["autosep"]["default"]["train"]["search"]["label_edit"] = "oracle"
    msg = params_error("autosep", PARAMS, params_copy)
    assert "label_edit" in msg and "prototype" in msg and "pair" in msg


def test_unknown_key_lists_allowed(params_copy):
    params_copy["autosep"]["default"]["prepare"]["samples"] = 10
    msg = params_error("autosep", PARAMS, params_copy)
    assert "autosep.default.prepare.samples: unknown key" in msg and "n_unlabelled" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.autosep.prepare", {"autosep.smoke.prepare.n_unlabelled": 2},
                               stage_env, python_exe)
    assert "autosep.smoke.prepare.n_unlabelled = 2" in err and ">= 3" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.autosep.train", "dvc repro stages/autosep/dvc.yaml:autosep-prepare",
                        stage_env, python_exe)
