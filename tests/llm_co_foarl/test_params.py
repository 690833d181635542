"""llm_co_foarl params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.llm_co_foarl.params import PARAMS
from tests.helpers import params_error


def test_heads_must_divide_d_model(params_copy):
    params_copy["llm_co_foarl"]["default"]["train"]["heads"] = 3
    assert "must be a multiple of heads" in params_error("llm_co_foarl", PARAMS, params_copy)


def test_group_needs_two_samples(params_copy):
    params_copy["llm_co_foarl"]["paper"]["train"]["rl_group"] = 1
    msg = params_error("llm_co_foarl", PARAMS, params_copy)
    assert "llm_co_foarl.paper.train.rl_group" in msg and ">= 2" in msg


def test_knapsack_size_is_bounded_by_the_number_tokens(params_copy):
    params_copy["llm_co_foarl"]["default"]["prepare"]["size"]["kp"] = 40
    assert "<= 20" in params_error("llm_co_foarl", PARAMS, params_copy)


def test_the_pointer_term_needs_the_entity_states(params_copy):
    params_copy["llm_co_foarl"]["default"]["train"]["entities"] = False
    assert "pointer needs entities" in params_error("llm_co_foarl", PARAMS, params_copy)


def test_the_data_seed_is_below_the_calibration_seeds(params_copy):
    params_copy["llm_co_foarl"]["default"]["prepare"]["data_seed"] = 1000
    msg = params_error("llm_co_foarl", PARAMS, params_copy)
    assert "llm_co_foarl.default.prepare.data_seed" in msg and "< 1000" in msg
