"""labyrinth params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.labyrinth.params import PARAMS
from tests.helpers import params_error


def test_maze_side_must_be_at_least_3(params_copy):
    params_copy["labyrinth"]["default"]["prepare"]["n"] = 2
    assert "labyrinth.default.prepare.n = 2" in params_error("labyrinth", PARAMS, params_copy)
