"""nac_b params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.nac_b.params import NacBParams

from tests.helpers import params_error


def _error(data) -> str:
    return params_error("nac_b", NacBParams, data)


def test_negative_step_refused(params_copy):
    params_copy["nac_b"]["default"]["train"]["regret"]["critic_step"] = -0.1
    msg = _error(params_copy)
    assert "nac_b.default.train.regret.critic_step = -0.1" in msg and "> 0" in msg


def test_batch_sizes_must_start_at_one(params_copy):
    params_copy["nac_b"]["default"]["train"]["batching"]["batch_sizes"] = [2, 4]
    assert "batch_sizes must be strictly increasing and start at 1, got [2, 4]" in _error(params_copy)


def test_batching_mdp_must_be_periodic_with_phase_rewards(params_copy):
    params_copy["nac_b"]["smoke"]["prepare"]["batching_mdp"]["period"] = 2
    assert "batching_mdp must have period >= 3 and phase_amplitude > 0" in _error(params_copy)


def test_rewards_must_stay_in_unit_interval(params_copy):
    params_copy["nac_b"]["paper"]["prepare"]["regret_mdp"]["phase_amplitude"] = 0.5
    assert "phase_amplitude + action_reward_scale must be <= 1" in _error(params_copy)


def test_T_grid_must_increase(params_copy):
    params_copy["nac_b"]["default"]["train"]["regret"]["T_grid"] = [2000, 1000, 5000]
    assert "T_grid must be strictly increasing" in _error(params_copy)


def test_string_runs_not_coerced(params_copy):
    params_copy["nac_b"]["default"]["train"]["regret"]["runs"] = "16"
    assert "nac_b.default.train.regret.runs = '16'" in _error(params_copy)


def test_plain_actor_step_must_be_positive(params_copy):
    params_copy["nac_b"]["smoke"]["train"]["regret"]["plain_actor_step"] = 0.0
    msg = _error(params_copy)
    assert "nac_b.smoke.train.regret.plain_actor_step = 0.0" in msg and "> 0" in msg


def test_runs_per_seed_need_two(params_copy):
    params_copy["nac_b"]["default"]["train"]["regret"]["runs"] = 1
    assert "nac_b.default.train.regret.runs = 1" in _error(params_copy)
