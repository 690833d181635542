"""mnl_assortment params: every profile validates; a bad value stops the stage before any compute
with exit status 2 and a message naming the key, the value and what is allowed."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.mnl_assortment.params import MnlAssortmentParams

from tests.common.conftest import params_error, stops_before_compute, stops_without_input

STUDY = "mnl_assortment"


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study(STUDY, MnlAssortmentParams, real_params, profile=profile)
    assert p.prepare.capacity <= p.prepare.n_items


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


def test_string_seeds_not_coerced(params_copy):
    params_copy[STUDY]["default"]["prepare"]["seeds"] = "16"
    assert "mnl_assortment.default.prepare.seeds = '16'" in _error(params_copy)


def test_unknown_key_lists_allowed_keys(params_copy):
    params_copy[STUDY]["default"]["evaluate"]["nboot"] = 10
    msg = _error(params_copy)
    assert "mnl_assortment.default.evaluate.nboot: unknown key" in msg and "n_boot" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.mnl_assortment.prepare", {"mnl_assortment.default.prepare.behaviour_explore": 1.5},
                               stage_env, python_exe)
    assert "mnl_assortment.default.prepare.behaviour_explore = 1.5" in err and "< 1" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.mnl_assortment.train", "dvc repro stages/mnl_assortment/dvc.yaml:mnl_assortment-prepare",
                        stage_env, python_exe)
