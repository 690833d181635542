"""diff_purify params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.diff_purify.params import PARAMS
from tests.helpers import params_error


def test_main_eps_must_be_attacked(params_copy):
    params_copy["diff_purify"]["default"]["evaluate"]["main_eps"] = 0.3
    assert "main_eps (0.3) must be one of eps" in params_error("diff_purify", PARAMS, params_copy)


def test_eps_must_increase(params_copy):
    params_copy["diff_purify"]["default"]["evaluate"]["eps"] = [0.1, 0.05]
    assert "eps must be increasing" in params_error("diff_purify", PARAMS, params_copy)


def test_sigmas_ordered(params_copy):
    params_copy["diff_purify"]["paper"]["train"]["prior_sigmas"] = [1.0, 0.1]
    assert "prior_sigmas must be [min, max]" in params_error("diff_purify", PARAMS, params_copy)
    params_copy["diff_purify"]["paper"]["train"]["prior_sigmas"] = [0.1, 1.0]
    params_copy["diff_purify"]["paper"]["purify"]["sigma_min"] = 2.0
    assert "sigma_min (2.0) must be <= sigma_max" in params_error("diff_purify", PARAMS, params_copy)


def test_small_eps_must_be_attacked(params_copy):
    params_copy["diff_purify"]["default"]["evaluate"]["small_eps"] = 0.07
    assert "small_eps (0.07) must be one of eps" in params_error("diff_purify", PARAMS, params_copy)
