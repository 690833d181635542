"""cdc_gs params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.cdc_gs.params import PARAMS
from tests.helpers import params_error


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
