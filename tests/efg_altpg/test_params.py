"""efg_altpg params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.efg_altpg.params import EfgAltPGParams

from tests.helpers import params_error


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


def test_rate_needs_two_starts_per_seed(params_copy):
    params_copy["efg_altpg"]["default"]["train"]["rate"]["starts"] = 1
    msg = _error(params_copy)
    assert "efg_altpg.default.train.rate.starts = 1" in msg and ">= 2" in msg


def test_random_games_need_depth_two(params_copy):
    """Depth 1: player 2 would never act (randgame draws such trees again, forever)."""
    params_copy["efg_altpg"]["smoke"]["prepare"]["random"]["depth"] = 1
    msg = _error(params_copy)
    assert "efg_altpg.smoke.prepare.random.depth = 1" in msg and ">= 2" in msg
