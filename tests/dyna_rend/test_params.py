"""dyna_rend params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.dyna_rend.params import PARAMS
from tests.helpers import params_error


def test_arms_must_include_none_dynarend_and_the_control(params_copy):
    params_copy["dyna_rend"]["default"]["train"]["arms"] = ["none", "mae2d", "dynarend"]
    assert "including none, dynarend, dynarend_blind" in params_error("dyna_rend", PARAMS, params_copy)


def test_unknown_camera(params_copy):
    params_copy["dyna_rend"]["default"]["train"]["cams_in"] = ["x+", "side"]
    assert "cams_in must be distinct cameras" in params_error("dyna_rend", PARAMS, params_copy)


def test_control_steps_is_gone(params_copy):
    """The short-pretraining control (control_steps) was retired on 2026-12-06: the key is unknown."""
    params_copy["dyna_rend"]["paper"]["train"]["control_steps"] = 100
    assert "control_steps" in params_error("dyna_rend", PARAMS, params_copy)


def test_grid_bounds(params_copy):
    params_copy["dyna_rend"]["default"]["prepare"]["grid"] = [8, 8, 2]
    assert "grid must be [x, y, z]" in params_error("dyna_rend", PARAMS, params_copy)
