"""auto_refine params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.auto_refine.params import PARAMS
from tests.helpers import params_error


def test_group_needs_two_samples(params_copy):
    params_copy["auto_refine"]["default"]["train"]["group"] = 1
    assert "auto_refine.default.train.group = 1" in params_error("auto_refine", PARAMS, params_copy)


def test_steps_a_multiple_of_the_learning_curves_interval(params_copy):
    params_copy["auto_refine"]["default"]["train"]["eval_every"] = 30
    assert "must be a multiple of eval_every (30)" in params_error("auto_refine", PARAMS, params_copy)


def test_at_least_one_replication(params_copy):
    params_copy["auto_refine"]["default"]["train"]["reps"] = 0
    assert "auto_refine.default.train.reps = 0" in params_error("auto_refine", PARAMS, params_copy)
