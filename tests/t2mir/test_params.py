"""t2mir params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.t2mir.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("t2mir", PARAMS, real_params, profile=profile)
    assert p.prepare.size == real_params["t2mir"][profile]["prepare"]["size"]


@pytest.mark.parametrize("key, value, msg", [
    ("heads", 5, "must be a multiple of heads"),
    ("top_k", 7, "top_k (7) must be <= n_token"),
    ("d", 9, "must be even"),
])
def test_bad_model_shapes(params_copy, key, value, msg):
    train = params_copy["t2mir"]["default"]["train"]
    if key == "d":
        train.update(d=9, heads=3)
    else:
        train[key] = value
    assert msg in params_error("t2mir", PARAMS, params_copy)


def test_too_few_tasks_on_a_side(params_copy):
    params_copy["t2mir"]["default"]["prepare"].update(size=3, holdout=0.1)
    assert "each side needs >= 2" in params_error("t2mir", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["t2mir"]["default"]["prepare"]["samples"] = 10
    msg = params_error("t2mir", PARAMS, params_copy)
    assert "t2mir.default.prepare.samples: unknown key" in msg and "holdout" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.t2mir.prepare", {"t2mir.smoke.prepare.size": 2},
                               stage_env, python_exe)
    assert "t2mir.smoke.prepare.size = 2" in err and ">= 3" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.t2mir.train", "dvc repro stages/t2mir/dvc.yaml:t2mir-prepare",
                        stage_env, python_exe)
