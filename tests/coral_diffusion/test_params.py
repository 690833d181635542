"""coral_diffusion params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.coral_diffusion.params import PARAMS
from tests.helpers import params_error


def test_head_and_tail_must_be_disjoint(params_copy):
    params_copy["coral_diffusion"]["default"]["evaluate"]["tail"] = [2, 8, 9]
    assert "must not share classes" in params_error("coral_diffusion", PARAMS, params_copy)


def test_classes_must_be_digits(params_copy):
    params_copy["coral_diffusion"]["default"]["evaluate"]["head"] = [0, 10]
    assert "classes must be distinct digits 0..9" in params_error("coral_diffusion", PARAMS, params_copy)


def test_sample_steps_at_most_T(params_copy):
    params_copy["coral_diffusion"]["paper"]["evaluate"]["sample_steps"] = 5000
    assert "must be <= train.T" in params_error("coral_diffusion", PARAMS, params_copy)


def test_long_tail_must_fit_the_smallest_class(params_copy):
    params_copy["coral_diffusion"]["default"]["prepare"]["n_max"] = 150
    assert "exceeds 174" in params_error("coral_diffusion", PARAMS, params_copy)
