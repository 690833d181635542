"""dima params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.dima.params import PARAMS
from tests.helpers import params_error


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


def test_ppo_batch_at_most_rollout(params_copy):
    params_copy["dima"]["default"]["baseline"]["batch"] = 1000
    assert "batch (1000) must be at most n_steps (500)" in params_error("dima", PARAMS, params_copy)


def test_patience_not_negative(params_copy):
    params_copy["dima"]["default"]["train"]["patience"] = -1
    assert "patience" in params_error("dima", PARAMS, params_copy)


def test_validation_episodes_at_least_one(params_copy):
    params_copy["dima"]["default"]["prepare"]["val_episodes"] = 0
    assert "val_episodes" in params_error("dima", PARAMS, params_copy)
