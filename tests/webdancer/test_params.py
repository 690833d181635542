"""webdancer params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.webdancer.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("webdancer", PARAMS, real_params, profile=profile)
    assert p.prepare.n_sft == real_params["webdancer"][profile]["prepare"]["n_sft"]


def test_clip_high_must_not_be_below_clip(params_copy):
    params_copy["webdancer"]["default"]["train"]["rl"]["clip_high"] = 0.1
    assert "clip_high (0.1) must be >= clip (0.2)" in params_error("webdancer", PARAMS, params_copy)


def test_topics_must_cover_the_links(params_copy):
    params_copy["webdancer"]["paper"]["env"]["n_topics"] = 3
    assert "n_topics (3) must be >= k (4)" in params_error("webdancer", PARAMS, params_copy)


def test_heads_must_divide_width(params_copy):
    params_copy["webdancer"]["smoke"]["train"]["arch"]["heads"] = 3
    assert "must be a multiple of heads" in params_error("webdancer", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["webdancer"]["default"]["prepare"]["samples"] = 10
    msg = params_error("webdancer", PARAMS, params_copy)
    assert "webdancer.default.prepare.samples: unknown key" in msg and "n_sft" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.webdancer.prepare", {"webdancer.smoke.prepare.n_sft": 3},
                               stage_env, python_exe)
    assert "webdancer.smoke.prepare.n_sft = 3" in err and ">= 10" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.webdancer.train", "dvc repro stages/webdancer/dvc.yaml:webdancer-prepare",
                        stage_env, python_exe)
