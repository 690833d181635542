"""escort_belief params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.common.runtime.params import load_study
from stages.escort_belief.params import EscortBeliefParams
from tests.helpers import params_error


def _error(data) -> str:
    return params_error("escort_belief", EscortBeliefParams, data)


def test_lambda_corr_out_of_range(params_copy):
    params_copy["escort_belief"]["default"]["train"]["escort"]["lambda_corr"] = 1.5
    msg = _error(params_copy)
    assert "escort_belief.default.train.escort.lambda_corr = 1.5" in msg and "<= 1" in msg


def test_unsorted_dims_refused(params_copy):
    params_copy["escort_belief"]["smoke"]["prepare"]["dims"] = [5, 2]
    assert "dims must be distinct and increasing" in _error(params_copy)


def test_cov_order_refused(params_copy):
    params_copy["escort_belief"]["paper"]["prepare"]["mixture"]["cov_min"] = 5.0
    assert "cov_min must be <= cov_max" in _error(params_copy)


def test_official_iters_out_of_range(params_copy):
    params_copy["escort_belief"]["default"]["train"]["escort_official"]["iters"] = 0
    msg = _error(params_copy)
    assert "escort_belief.default.train.escort_official.iters = 0" in msg and ">= 1" in msg


def test_reps_dmax_below_reps_refused(params_copy):
    params_copy["escort_belief"]["default"]["prepare"]["reps_dmax"] = 2
    assert "reps_dmax must be >= reps" in _error(params_copy)


def test_reps_at_uses_reps_dmax_only_at_the_largest_dim(real_params):
    _, p = load_study("escort_belief", EscortBeliefParams, real_params, profile="default")
    d = p.prepare.dims
    assert p.prepare.reps_at(d[-1]) == p.prepare.reps_dmax and p.prepare.reps_at(d[0]) == p.prepare.reps


def test_n_boot_out_of_range(params_copy):
    params_copy["escort_belief"]["default"]["evaluate"]["n_boot"] = 10
    msg = _error(params_copy)
    assert "escort_belief.default.evaluate.n_boot = 10" in msg and ">= 100" in msg
