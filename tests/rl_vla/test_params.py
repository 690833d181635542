"""rl_vla params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.rl_vla.params import PARAMS
from tests.helpers import params_error


def test_rl_methods_share_one_budget(params_copy):
    params_copy["rl_vla"]["default"]["train"]["grpo"]["env_steps"] = 12345
    assert "ppo, grpo and dpo must get the same env_steps" in params_error("rl_vla", PARAMS, params_copy)


def test_ppo_batch_fits_a_rollout(params_copy):
    params_copy["rl_vla"]["paper"]["train"]["ppo"]["batch"] = 10**6
    assert "must be <= n_envs * n_steps" in params_error("rl_vla", PARAMS, params_copy)


def test_control_gets_the_rl_budget(params_copy):
    params_copy["rl_vla"]["default"]["prepare"]["more_demo_steps"] = 777
    assert "the control sft_more gets the RL arms' budget" in params_error("rl_vla", PARAMS, params_copy)
