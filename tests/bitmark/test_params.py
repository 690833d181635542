"""bitmark params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.bitmark.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("bitmark", PARAMS, real_params, profile=profile)
    assert p.watermark.delta in p.evaluate.deltas
    assert p.watermark.ngram == real_params["bitmark"][profile]["watermark"]["ngram"]


def test_chosen_delta_must_be_swept(params_copy):
    params_copy["bitmark"]["default"]["watermark"]["delta"] = 1.7
    assert "must be one of evaluate.deltas" in params_error("bitmark", PARAMS, params_copy)


def test_deltas_must_increase(params_copy):
    params_copy["bitmark"]["paper"]["evaluate"]["deltas"] = [2.0, 1.0]
    assert "deltas must be strictly increasing" in params_error("bitmark", PARAMS, params_copy)


def test_bitflip_probability_at_most_half(params_copy):
    params_copy["bitmark"]["default"]["evaluate"]["bitflip"] = [0.1, 0.6]
    assert "bitflip probabilities must be <= 0.5" in params_error("bitmark", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["bitmark"]["default"]["watermark"]["gamma"] = 0.25
    msg = params_error("bitmark", PARAMS, params_copy)
    assert "bitmark.default.watermark.gamma: unknown key" in msg and "ngram" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.bitmark.prepare", {"bitmark.smoke.watermark.ngram": 0},
                               stage_env, python_exe)
    assert "bitmark.smoke.watermark.ngram = 0" in err and ">= 1" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.bitmark.train", "dvc repro stages/bitmark/dvc.yaml:bitmark-prepare",
                        stage_env, python_exe)


def test_evaluate_without_models_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.bitmark.evaluate", "dvc repro stages/bitmark/dvc.yaml:bitmark-train",
                        stage_env, python_exe)
