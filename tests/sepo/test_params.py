"""sepo params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.sepo.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("sepo", PARAMS, real_params, profile=profile)
    assert p.prepare.length == real_params["sepo"][profile]["prepare"]["length"]


def test_temperatures_must_decrease(params_copy):
    params_copy["sepo"]["default"]["train"]["rwft"]["temperatures"] = [0.1, 1.0]
    assert "temperatures must be > 0 and strictly decreasing" in params_error("sepo", PARAMS, params_copy)


def test_motif_must_be_dna_and_fit(params_copy):
    params_copy["sepo"]["default"]["prepare"]["motif"] = "TAXA"
    assert "motif must be over ACGT" in params_error("sepo", PARAMS, params_copy)
    params_copy["sepo"]["default"]["prepare"]["motif"] = "TATATATATA"
    assert "longer than the sequences" in params_error("sepo", PARAMS, params_copy)


def test_best_of_must_increase(params_copy):
    params_copy["sepo"]["paper"]["evaluate"]["best_of"] = [4, 2]
    assert "best_of must be >= 1 and strictly increasing" in params_error("sepo", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["sepo"]["default"]["prepare"]["samples"] = 10
    msg = params_error("sepo", PARAMS, params_copy)
    assert "sepo.default.prepare.samples: unknown key" in msg and "n_train" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.sepo.prepare", {"sepo.smoke.prepare.length": 30},
                               stage_env, python_exe)
    assert "sepo.smoke.prepare.length = 30" in err and "<= 9" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.sepo.train", "dvc repro stages/sepo/dvc.yaml:sepo-prepare",
                        stage_env, python_exe)
