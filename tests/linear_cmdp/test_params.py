"""linear_cmdp params: every profile validates; a bad value stops the stage before any compute
with exit status 2 and a message naming the key, the value and what is allowed."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.linear_cmdp.params import LinearCmdpParams

from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("linear_cmdp", LinearCmdpParams, real_params, profile=profile)
    assert {s.kind for s in p.prepare.setups.values()} == {"tabular", "linear"}
    assert all(s.threshold_scale >= 0.9 for s in p.prepare.setups.values() if s.kind == "linear")
    if profile != "smoke":
        main = next(a for a in p.train.agents if a.name == p.evaluate.main_agent)
        assert main.episodes >= 10_000                       # STUDIES.md: slope over [K/2, K], K >= 10^4


def _error(data) -> str:
    return params_error("linear_cmdp", LinearCmdpParams, data)


def test_negative_bonus_constant_refused(params_copy):
    params_copy["linear_cmdp"]["default"]["train"]["agents"][0]["c_u"] = -1.0
    msg = _error(params_copy)
    assert "linear_cmdp.default.train.agents[0].c_u = -1.0" in msg and "greater than or equal to 0" in msg


def test_linear_threshold_scale_below_0_9_refused(params_copy):
    params_copy["linear_cmdp"]["default"]["prepare"]["setups"]["linear"]["threshold_scale"] = 0.6
    assert "a linear setup needs threshold_scale >= 0.9 (STUDIES.md), got 0.6" in _error(params_copy)


def test_tabular_features_must_be_one_hot(params_copy):
    params_copy["linear_cmdp"]["smoke"]["prepare"]["setups"]["tabular"]["d"] = 4
    assert "d must be S*A = 15, got 4" in _error(params_copy)


def test_agent_on_unknown_setup_refused(params_copy):
    params_copy["linear_cmdp"]["paper"]["train"]["agents"][1]["setups"] = ["tabular", "streaming"]
    assert "agent 'opse_cu1': unknown setups ['streaming']" in _error(params_copy)


def test_dope_is_tabular_only(params_copy):
    dope = next(a for a in params_copy["linear_cmdp"]["default"]["train"]["agents"] if a["kind"] == "dope")
    dope["setups"] = ["tabular", "linear"]
    assert "dope is tabular only" in _error(params_copy)


def test_main_agent_must_be_opse(params_copy):
    params_copy["linear_cmdp"]["default"]["evaluate"]["main_agent"] = "ghosh"
    assert "evaluate.main_agent = 'ghosh' must name a train agent of kind 'opse'" in _error(params_copy)


def test_unknown_kind_lists_allowed(params_copy):
    params_copy["linear_cmdp"]["default"]["train"]["agents"][3]["kind"] = "cpo"
    msg = _error(params_copy)
    assert "linear_cmdp.default.train.agents[3].kind = 'cpo'" in msg and "'opse', 'ghosh' or 'dope'" in msg


def test_string_episodes_not_coerced(params_copy):
    params_copy["linear_cmdp"]["default"]["train"]["agents"][0]["episodes"] = "10000"
    assert "linear_cmdp.default.train.agents[0].episodes = '10000'" in _error(params_copy)


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.linear_cmdp.prepare", {"linear_cmdp.default.evaluate.violation_tol": 0.5},
                               stage_env, python_exe)
    assert "linear_cmdp.default.evaluate.violation_tol = 0.5" in err and "<= 0.001" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.linear_cmdp.train", "dvc repro stages/linear_cmdp/dvc.yaml:linear_cmdp-prepare",
                        stage_env, python_exe)
