"""mpo params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.mpo.params import PARAMS
from tests.helpers import params_error


def test_flips_must_start_clean_and_increase(params_copy):
    params_copy["mpo"]["default"]["prepare"]["flips"] = [0.2, 0.3]
    assert "flips must start at 0, increase strictly" in params_error("mpo", PARAMS, params_copy)


def test_target_flip_must_be_a_flip(params_copy):
    params_copy["mpo"]["paper"]["prepare"]["target_flip"] = 0.25
    assert "must be one of flips" in params_error("mpo", PARAMS, params_copy)


def test_dpo_grid_needs_beta_one(params_copy):
    params_copy["mpo"]["smoke"]["train"]["dpo_betas"] = [0.3]
    assert "dpo_betas must contain 1.0" in params_error("mpo", PARAMS, params_copy)
