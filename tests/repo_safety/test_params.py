"""repo_safety params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.repo_safety.params import RepoSafetyParams

from tests.helpers import params_error


def _error(data) -> str:
    return params_error("repo_safety", RepoSafetyParams, data)


def test_one_response_refused(params_copy):
    params_copy["repo_safety"]["default"]["prepare"]["n_responses"] = 1
    msg = _error(params_copy)
    assert "repo_safety.default.prepare.n_responses = 1" in msg and ">= 2" in msg


def test_fraction_out_of_range(params_copy):
    params_copy["repo_safety"]["smoke"]["prepare"]["fractions"] = [0.12, 1.5]
    msg = _error(params_copy)
    assert "repo_safety.smoke.prepare.fractions[1] = 1.5" in msg and "<= 0.9" in msg


def test_target_outside_the_correlation_range(params_copy):
    params_copy["repo_safety"]["default"]["prepare"]["correlation_target"] = 0.7
    assert "correlation_target 0.7 must lie in correlation_range" in _error(params_copy)


def test_primary_fraction_must_be_in_the_sweep(params_copy):
    params_copy["repo_safety"]["paper"]["evaluate"]["primary_fraction"] = 0.5
    assert "primary_fraction 0.5 must be one of prepare.fractions" in _error(params_copy)


def test_log_update_needs_positive_init(params_copy):
    params_copy["repo_safety"]["default"]["train"]["baseline_dual"]["init"] = 0.0
    assert "update 'log' needs init > 0" in _error(params_copy)


def test_unknown_update_lists_the_allowed(params_copy):
    params_copy["repo_safety"]["default"]["train"]["repo_dual"]["update"] = "adam"
    msg = _error(params_copy)
    assert "repo_safety.default.train.repo_dual.update = 'adam'" in msg and "'additive'" in msg


def test_string_steps_not_coerced(params_copy):
    params_copy["repo_safety"]["default"]["train"]["steps"] = "5000"
    assert "repo_safety.default.train.steps = '5000'" in _error(params_copy)


def test_tightened_share_below_one(params_copy):
    params_copy["repo_safety"]["default"]["train"]["tightened_share"] = 1.0
    msg = _error(params_copy)
    assert "repo_safety.default.train.tightened_share = 1.0" in msg and "< 1" in msg
