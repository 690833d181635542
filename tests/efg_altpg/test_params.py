"""efg_altpg params: every profile validates; a bad value stops the stage before any compute
with exit status 2 and a message naming the key, the value and what is allowed."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.efg_altpg.params import EfgAltPGParams

from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("efg_altpg", EfgAltPGParams, real_params, profile=profile)
    assert p.train.kuhn_poker.tau <= 0.01 and "kuhn_poker" in p.prepare.games


def _error(data) -> str:
    return params_error("efg_altpg", EfgAltPGParams, data)


def test_tau_above_study_limit(params_copy):
    params_copy["efg_altpg"]["default"]["train"]["kuhn_poker"]["tau"] = 0.05
    msg = _error(params_copy)
    assert "efg_altpg.default.train.kuhn_poker.tau = 0.05" in msg and "<= 0.01" in msg


def test_negative_step_in_grid(params_copy):
    params_copy["efg_altpg"]["smoke"]["train"]["leduc_poker"]["steps"]["softmax"] = [1.0, -2.0]
    msg = _error(params_copy)
    assert "efg_altpg.smoke.train.leduc_poker.steps.softmax[1] = -2.0" in msg and "> 0" in msg


def test_unknown_game(params_copy):
    params_copy["efg_altpg"]["default"]["prepare"]["games"] = ["kuhn_poker", "texas_holdem"]
    msg = _error(params_copy)
    assert "efg_altpg.default.prepare.games[1] = 'texas_holdem'" in msg and "'leduc_poker'" in msg


def test_kuhn_required(params_copy):
    params_copy["efg_altpg"]["paper"]["prepare"]["games"] = ["leduc_poker"]
    assert "must include 'kuhn_poker'" in _error(params_copy)


def test_leduc_used_but_not_built(params_copy):
    params_copy["efg_altpg"]["default"]["prepare"]["games"] = ["kuhn_poker"]
    assert "does not build" in _error(params_copy)


def test_epsilons_must_decrease(params_copy):
    params_copy["efg_altpg"]["default"]["train"]["rate"]["epsilons"] = [0.01, 0.02, 0.04]
    assert "epsilons must be strictly decreasing" in _error(params_copy)


def test_string_iterations_not_coerced(params_copy):
    params_copy["efg_altpg"]["default"]["train"]["kuhn_poker"]["iterations"] = "3000"
    assert "efg_altpg.default.train.kuhn_poker.iterations = '3000'" in _error(params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["efg_altpg"]["default"]["train"]["lr"] = 0.1
    msg = _error(params_copy)
    assert "efg_altpg.default.train.lr: unknown key" in msg and "last_fraction" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.efg_altpg.prepare", {"efg_altpg.smoke.train.floor": 0.5},
                               stage_env, python_exe)
    assert "efg_altpg.smoke.train.floor = 0.5" in err and "<= 0.1" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.efg_altpg.train", "dvc repro stages/efg_altpg/dvc.yaml:efg_altpg-prepare",
                        stage_env, python_exe)
