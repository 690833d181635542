"""nac_b params: every profile validates; a bad value stops the stage before any compute with
exit status 2 and a message naming the key, the value and what is allowed."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.nac_b.params import NacBParams

from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("nac_b", NacBParams, real_params, profile=profile)
    assert p.prepare.batching_mdp.period in (3, 4) and p.prepare.batching_mdp.phase_amplitude > 0
    assert p.train.batching.batch_sizes[0] == 1 and len(p.train.batching.batch_sizes) >= 2


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


def test_string_seeds_not_coerced(params_copy):
    params_copy["nac_b"]["default"]["train"]["regret"]["seeds"] = "16"
    assert "nac_b.default.train.regret.seeds = '16'" in _error(params_copy)


def test_unknown_key_lists_allowed_keys(params_copy):
    params_copy["nac_b"]["default"]["evaluate"]["nboot"] = 10
    msg = _error(params_copy)
    assert "nac_b.default.evaluate.nboot: unknown key" in msg and "n_boot" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.nac_b.prepare", {"nac_b.default.prepare.rvi_tau": 1.5},
                               stage_env, python_exe)
    assert "nac_b.default.prepare.rvi_tau = 1.5" in err and "< 1" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.nac_b.train", "dvc repro stages/nac_b/dvc.yaml:nac_b-prepare",
                        stage_env, python_exe)
