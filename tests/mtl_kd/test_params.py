"""mtl_kd params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.mtl_kd.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("mtl_kd", PARAMS, real_params, profile=profile)
    assert p.prepare.n == real_params["mtl_kd"][profile]["prepare"]["n"]
    assert p.train.teacher.dim % p.train.teacher.heads == 0


def test_unknown_variant_is_named(params_copy):
    params_copy["mtl_kd"]["default"]["prepare"]["unseen"] = ["vrpbtw"]
    assert "variant 'vrpbtw' is not one of" in params_error("mtl_kd", PARAMS, params_copy)


def test_seen_and_unseen_must_not_overlap(params_copy):
    params_copy["mtl_kd"]["paper"]["prepare"]["unseen"] = ["cvrp"]
    assert "overlap" in params_error("mtl_kd", PARAMS, params_copy)


def test_heads_must_divide_dim(params_copy):
    params_copy["mtl_kd"]["default"]["train"]["student"]["heads"] = 5
    assert "must be a multiple of heads" in params_error("mtl_kd", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["mtl_kd"]["default"]["prepare"]["samples"] = 10
    msg = params_error("mtl_kd", PARAMS, params_copy)
    assert "mtl_kd.default.prepare.samples: unknown key" in msg and "test_count" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.mtl_kd.prepare", {"mtl_kd.smoke.prepare.n": 3},
                               stage_env, python_exe)
    assert "mtl_kd.smoke.prepare.n = 3" in err and ">= 5" in err


def test_evaluate_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.mtl_kd.evaluate", "dvc repro stages/mtl_kd/dvc.yaml:mtl_kd-prepare",
                        stage_env, python_exe)
