"""noisy_grpo params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.noisy_grpo.params import PARAMS
from tests.helpers import params_error


def test_grid_must_hold_the_objects(params_copy):
    params_copy["noisy_grpo"]["default"]["prepare"]["grid"] = 3
    params_copy["noisy_grpo"]["default"]["prepare"]["max_per_colour"] = 4
    assert "cannot hold 3 x 4 objects" in params_error("noisy_grpo", PARAMS, params_copy)


def test_ood_dim_must_be_inside_01(params_copy):
    params_copy["noisy_grpo"]["default"]["prepare"]["ood_dim"] = [0.5, 1.0]
    assert "ood_dim must satisfy" in params_error("noisy_grpo", PARAMS, params_copy)


def test_noise_is_required(params_copy):
    params_copy["noisy_grpo"]["paper"]["train"]["sigma_start"] = 0.0
    params_copy["noisy_grpo"]["paper"]["train"]["sigma_end"] = 0.0
    assert "NoisyGRPO needs noise" in params_error("noisy_grpo", PARAMS, params_copy)
