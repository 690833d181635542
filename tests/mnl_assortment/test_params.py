"""mnl_assortment params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.common.runtime.params import load_study
from stages.mnl_assortment.params import MnlAssortmentParams

from tests.helpers import params_error

STUDY = "mnl_assortment"


def test_default_is_the_studies_setting(real_params):
    _, p = load_study(STUDY, MnlAssortmentParams, real_params, profile="default")
    pp = p.prepare
    assert (pp.dim, pp.n_items, pp.capacity, pp.horizon) == (5, 10, 4, 2000)
    assert (pp.revenue_low, pp.revenue_high, pp.radii) == (0.5, 1.0, [1.0, 2.0, 3.0])


def _error(data) -> str:
    return params_error(STUDY, MnlAssortmentParams, data)


def test_capacity_above_items_refused(params_copy):
    params_copy[STUDY]["default"]["prepare"]["capacity"] = 12
    msg = _error(params_copy)
    assert "mnl_assortment.default.prepare.capacity = 12" in msg and "<= 8" in msg


def test_capacity_larger_than_items_message(params_copy):
    params_copy[STUDY]["smoke"]["prepare"]["n_items"] = 3
    assert "capacity must be <= n_items, got capacity=4, n_items=3" in _error(params_copy)


def test_radii_must_increase(params_copy):
    params_copy[STUDY]["paper"]["prepare"]["radii"] = [2.0, 1.0]
    assert "radii must be strictly increasing, got [2.0, 1.0]" in _error(params_copy)


def test_revenue_interval_must_be_proper(params_copy):
    params_copy[STUDY]["default"]["prepare"]["revenue_low"] = 1.0
    assert "revenue_low must be < revenue_high, got 1.0 >= 1.0" in _error(params_copy)


def test_negative_ridge_refused(params_copy):
    params_copy[STUDY]["default"]["train"]["ridge"] = -1.0
    msg = _error(params_copy)
    assert "mnl_assortment.default.train.ridge = -1.0" in msg and "> 0" in msg


def test_string_runs_not_coerced(params_copy):
    params_copy[STUDY]["default"]["prepare"]["runs"] = "16"
    assert "mnl_assortment.default.prepare.runs = '16'" in _error(params_copy)


def test_unknown_online_task_refused(params_copy):
    params_copy[STUDY]["default"]["prepare"]["online_task"] = "catalogue"
    msg = _error(params_copy)
    assert "mnl_assortment.default.prepare.online_task = 'catalogue'" in msg and "'canonical' or 'fresh'" in msg


def test_canonical_task_bounds_the_dimension(params_copy):
    params_copy[STUDY]["smoke"]["prepare"].update(online_task="canonical", n_items=14)
    assert "the canonical online task has d = n_items; n_items must be <= 12, got 14" in _error(params_copy)


def test_loose_mle_tolerance_refused(params_copy):
    params_copy[STUDY]["default"]["train"]["mle_tolerance"] = 0.5
    msg = _error(params_copy)
    assert "mnl_assortment.default.train.mle_tolerance = 0.5" in msg and "<= 0.01" in msg
