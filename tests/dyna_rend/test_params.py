"""dyna_rend params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.dyna_rend.params import PARAMS
from tests.helpers import params_error


def test_arms_must_include_none_and_dynarend(params_copy):
    params_copy["dyna_rend"]["default"]["train"]["arms"] = ["none", "mae2d"]
    assert "including none and dynarend" in params_error("dyna_rend", PARAMS, params_copy)


def test_unknown_camera(params_copy):
    params_copy["dyna_rend"]["default"]["train"]["cams_in"] = ["x+", "side"]
    assert "cams_in must be distinct cameras" in params_error("dyna_rend", PARAMS, params_copy)


def test_control_shorter_than_pretraining(params_copy):
    params_copy["dyna_rend"]["paper"]["train"]["control_steps"] = 30000
    assert "control_steps (30000) must be < pretrain_steps" in params_error("dyna_rend", PARAMS, params_copy)


def test_grid_bounds(params_copy):
    params_copy["dyna_rend"]["default"]["prepare"]["grid"] = [8, 8, 2]
    assert "grid must be [x, y, z]" in params_error("dyna_rend", PARAMS, params_copy)
