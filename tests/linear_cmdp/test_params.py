"""linear_cmdp params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.linear_cmdp.params import LinearCmdpParams

from tests.helpers import params_error


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


def _agent(params_copy, profile, name):
    return next(a for a in params_copy["linear_cmdp"][profile]["train"]["agents"] if a["name"] == name)


def test_agent_on_unknown_setup_refused(params_copy):
    _agent(params_copy, "paper", "opse_cu1")["setups"] = ["tabular", "streaming"]
    assert "agent 'opse_cu1': unknown setups ['streaming']" in _error(params_copy)


def test_the_control_must_be_the_main_agent_without_pessimism(params_copy):
    _agent(params_copy, "default", "opse_no_pessimism")["c_u"] = 0.5
    assert ("evaluate.no_pessimism_agent = 'opse_no_pessimism' must be another agent with c_u = 0 "
            "(the main agent without its pessimism), got c_u = 0.5") in _error(params_copy)


def test_the_control_differs_from_the_main_agent_in_c_u_only(params_copy):
    abl = _agent(params_copy, "smoke", "opse_no_pessimism")
    abl["kappa"], abl["episodes"] = 0.2, 100
    assert ("evaluate.no_pessimism_agent = 'opse_no_pessimism' differs from the main agent 'opse' in "
            "['episodes', 'kappa']: only c_u may differ") in _error(params_copy)


def test_the_control_cannot_be_the_main_agent(params_copy):
    params_copy["linear_cmdp"]["default"]["evaluate"]["no_pessimism_agent"] = "ghosh"
    assert "evaluate.no_pessimism_agent = 'ghosh' must name a train agent of kind 'opse'" in _error(params_copy)


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
