"""autoopt params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

import copy


from stages.autoopt.params import AutoOptParams

from tests.helpers import params_error


def _error(data) -> str:
    return params_error("autoopt", AutoOptParams, data)


def test_bad_values_name_key_value_and_rule(real_params):
    bad = copy.deepcopy(real_params)
    bad["autoopt"]["default"]["prepare"]["dpi"] = 10
    msg = _error(bad)
    assert "autoopt.default.prepare.dpi = 10" in msg and ">= 40" in msg

    bad = copy.deepcopy(real_params)
    bad["autoopt"]["paper"]["prepare"]["source"] = "kaggle"
    msg = _error(bad)
    assert "autoopt.paper.prepare.source = 'kaggle'" in msg and "'generated', 'published'" in msg

    bad = copy.deepcopy(real_params)
    bad["autoopt"]["smoke"]["prepare"]["type_weights"]["quadratic"] = 1.0
    msg = _error(bad)
    assert "type_weights" in msg and "quadratic" in msg and "single, multi, bilevel, stochastic" in msg

    bad = copy.deepcopy(real_params)
    bad["autoopt"]["default"]["train"]["curve_fractions"] = [0.5, 0.25, 1.0]
    assert "strictly increasing" in _error(bad)

    bad = copy.deepcopy(real_params)
    bad["autoopt"]["default"]["train"]["heads"] = 3
    assert "multiple of heads" in _error(bad)

    bad = copy.deepcopy(real_params)
    bad["autoopt"]["default"]["evaluate"]["beam_widht"] = 2
    msg = _error(bad)
    assert "beam_widht: unknown key" in msg and "beam_width" in msg


def test_stage_exits_2_before_compute(tmp_path, stage_env, python_exe):
    from tests.helpers import stops_before_compute

    err = stops_before_compute(tmp_path, "stages.autoopt.m1.train", {"autoopt.smoke.train.steps": 0},
                               stage_env, python_exe)
    assert "autoopt.smoke.train.steps = 0" in err and ">= 1" in err
