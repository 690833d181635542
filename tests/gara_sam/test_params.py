"""gara_sam params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.gara_sam.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("gara_sam", PARAMS, real_params, profile=profile)
    assert p.prepare.n_test == real_params["gara_sam"][profile]["prepare"]["n_test"]
    assert p.train.adapt.rank == real_params["gara_sam"][profile]["train"]["adapt"]["rank"]


def test_size_must_pool_twice(params_copy):
    params_copy["gara_sam"]["default"]["prepare"]["size"] = 30
    assert "size must be a multiple of 4" in params_error("gara_sam", PARAMS, params_copy)


def test_adapt_shapes_must_be_known(params_copy):
    params_copy["gara_sam"]["default"]["prepare"]["adapt_shapes"] = ["ellipse", "star"]
    assert "adapt_shapes must be distinct kinds of" in params_error("gara_sam", PARAMS, params_copy)


def test_width_must_suit_groupnorm(params_copy):
    params_copy["gara_sam"]["paper"]["train"]["width"] = 10
    assert "width must be a multiple of 4" in params_error("gara_sam", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["gara_sam"]["default"]["train"]["adapt"]["dropout"] = 0.1
    msg = params_error("gara_sam", PARAMS, params_copy)
    assert "gara_sam.default.train.adapt.dropout: unknown key" in msg and "gate_lr_mult" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.gara_sam.prepare", {"gara_sam.smoke.prepare.n_test": 3},
                               stage_env, python_exe)
    assert "gara_sam.smoke.prepare.n_test = 3" in err and ">= 4" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.gara_sam.train", "dvc repro stages/gara_sam/dvc.yaml:gara_sam-prepare",
                        stage_env, python_exe)
