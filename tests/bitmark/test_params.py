"""bitmark params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.bitmark.params import PARAMS
from tests.helpers import params_error, stops_without_input


def test_chosen_delta_must_be_swept(params_copy):
    params_copy["bitmark"]["default"]["watermark"]["delta"] = 1.7
    assert "must be one of evaluate.deltas" in params_error("bitmark", PARAMS, params_copy)


def test_deltas_must_increase(params_copy):
    params_copy["bitmark"]["paper"]["evaluate"]["deltas"] = [2.0, 1.0]
    assert "deltas must be strictly increasing" in params_error("bitmark", PARAMS, params_copy)


def test_bitflip_probability_at_most_half(params_copy):
    params_copy["bitmark"]["default"]["evaluate"]["bitflip"] = [0.1, 0.6]
    assert "bitflip probabilities must be <= 0.5" in params_error("bitmark", PARAMS, params_copy)


def test_finetune_set_needs_watermarked_samples(params_copy):
    params_copy["bitmark"]["default"]["train"]["finetune_wm"] = 0
    msg = params_error("bitmark", PARAMS, params_copy)
    assert "finetune_wm" in msg and "greater than or equal to 10" in msg


def test_matched_token_delta_must_be_positive(params_copy):
    params_copy["bitmark"]["smoke"]["evaluate"]["token_delta_matched"] = 0
    msg = params_error("bitmark", PARAMS, params_copy)
    assert "token_delta_matched" in msg and "greater than 0" in msg


def test_evaluate_without_models_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.bitmark.evaluate",
                        "(made by stage bitmark-train) is missing; "
                        "run `dvc repro stages/bitmark/dvc.yaml:bitmark-train`",
                        stage_env, python_exe)
