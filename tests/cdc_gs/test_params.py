"""cdc_gs params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.cdc_gs.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("cdc_gs", PARAMS, real_params, profile=profile)
    assert p.train.main_count in p.train.counts
    assert p.prepare.images == real_params["cdc_gs"][profile]["prepare"]["images"]


def test_counts_must_increase(params_copy):
    params_copy["cdc_gs"]["default"]["train"]["counts"] = [200, 100]
    assert "counts must be >= 8 and strictly increasing" in params_error("cdc_gs", PARAMS, params_copy)


def test_main_count_must_be_fitted(params_copy):
    params_copy["cdc_gs"]["paper"]["train"]["main_count"] = 123
    assert "must be one of counts" in params_error("cdc_gs", PARAMS, params_copy)


def test_unknown_image_and_wavelet(params_copy):
    params_copy["cdc_gs"]["default"]["prepare"]["images"] = ["camera", "lena"]
    assert "images must be distinct names of" in params_error("cdc_gs", PARAMS, params_copy)
    params_copy["cdc_gs"]["default"]["prepare"]["images"] = ["camera"]
    params_copy["cdc_gs"]["default"]["prepare"]["wavelet"] = "mexh"
    assert "wavelet must be a discrete PyWavelets wavelet" in params_error("cdc_gs", PARAMS, params_copy)


def test_schedule_order(params_copy):
    params_copy["cdc_gs"]["smoke"]["train"]["densify_until"] = 500
    assert "densify_from < densify_until < steps" in params_error("cdc_gs", PARAMS, params_copy)


def test_fit_batch_is_at_least_one(params_copy):
    params_copy["cdc_gs"]["default"]["train"]["fit_batch"] = 0
    msg = params_error("cdc_gs", PARAMS, params_copy)
    assert "cdc_gs.default.train.fit_batch = 0" in msg and ">= 1" in msg


def test_the_old_ablation_switch_is_gone(params_copy):
    """The shuffled-map arm is the must's control now: always fitted, no switch."""
    params_copy["cdc_gs"]["smoke"]["train"]["ablation"] = True
    assert "cdc_gs.smoke.train.ablation: unknown key" in params_error("cdc_gs", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["cdc_gs"]["default"]["prepare"]["samples"] = 10
    msg = params_error("cdc_gs", PARAMS, params_copy)
    assert "cdc_gs.default.prepare.samples: unknown key" in msg and "size" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.cdc_gs.prepare", {"cdc_gs.smoke.prepare.size": 3},
                               stage_env, python_exe)
    assert "cdc_gs.smoke.prepare.size = 3" in err and ">= 8" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.cdc_gs.train", "dvc repro stages/cdc_gs/dvc.yaml:cdc_gs-prepare",
                        stage_env, python_exe)
