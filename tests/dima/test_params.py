"""dima params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.dima.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("dima", PARAMS, real_params, profile=profile)
    assert p.prepare.n_agents == real_params["dima"][profile]["prepare"]["n_agents"]


def test_control_must_have_fewer_agents(params_copy):
    params_copy["dima"]["default"]["prepare"]["control_agents"] = 2
    assert "control_agents (2) must be below n_agents (2)" in params_error("dima", PARAMS, params_copy)


def test_rich_control_needs_more_data(params_copy):
    params_copy["dima"]["default"]["prepare"]["rich_episodes"] = 50
    assert "rich_episodes (50) must exceed train_episodes (100)" in params_error("dima", PARAMS, params_copy)


def test_seq_training_is_known(params_copy):
    params_copy["dima"]["paper"]["train"]["seq_training"] = "ddpm"
    assert "seq_training must be one of" in params_error("dima", PARAMS, params_copy)


def test_elites_at_most_candidates(params_copy):
    params_copy["dima"]["smoke"]["evaluate"]["plan"]["elites"] = 64
    assert "elites (64) must be at most candidates (16)" in params_error("dima", PARAMS, params_copy)


def test_horizon_within_episode(params_copy):
    params_copy["dima"]["default"]["evaluate"]["horizon"] = 30
    assert "evaluate.horizon (30) must be at most prepare.max_cycles (25)" in params_error("dima", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["dima"]["default"]["prepare"]["samples"] = 10
    msg = params_error("dima", PARAMS, params_copy)
    assert "dima.default.prepare.samples: unknown key" in msg and "n_agents" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.dima.prepare", {"dima.smoke.prepare.n_agents": 9},
                               stage_env, python_exe)
    assert "dima.smoke.prepare.n_agents = 9" in err and "<= 6" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.dima.train", "dvc repro stages/dima/dvc.yaml:dima-prepare",
                        stage_env, python_exe)


def test_ppo_batch_at_most_rollout(params_copy):
    params_copy["dima"]["default"]["baseline"]["batch"] = 1000
    assert "batch (1000) must be at most n_steps (500)" in params_error("dima", PARAMS, params_copy)
