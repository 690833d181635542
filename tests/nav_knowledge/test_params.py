"""nav_knowledge params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.nav_knowledge.params import NavKnowledgeParams

from tests.helpers import params_error

STUDY = "nav_knowledge"


def _error(data) -> str:
    return params_error(STUDY, NavKnowledgeParams, data)


def test_held_out_must_leave_training_trajectories(params_copy):
    params_copy[STUDY]["default"]["prepare"]["held_out"] = 4
    assert "held_out must be < trajectories, got held_out=4, trajectories=4" in _error(params_copy)


def test_replan_sizes_need_64(params_copy):
    params_copy[STUDY]["smoke"]["replan"]["sizes"] = [16, 32]
    assert "sizes must include 64 (the claim is at 64x64), got [16, 32]" in _error(params_copy)


def test_wall_len_order(params_copy):
    params_copy[STUDY]["paper"]["prepare"]["wall_len"] = [4, 2]
    assert "wall_len must be [shortest, longest], got [4, 2]" in _error(params_copy)


def test_p_known_out_of_range(params_copy):
    params_copy[STUDY]["default"]["prepare"]["p_known"] = 1.0
    msg = _error(params_copy)
    assert "nav_knowledge.default.prepare.p_known = 1.0" in msg and "< 1" in msg


def test_burn_below_sweeps(params_copy):
    params_copy[STUDY]["default"]["train"]["gibbs_burn"] = 50
    assert "gibbs_burn must be < gibbs_sweeps, got 50 >= 50" in _error(params_copy)


def test_string_particles_not_coerced(params_copy):
    params_copy[STUDY]["default"]["train"]["particles"] = "64"
    assert "nav_knowledge.default.train.particles = '64'" in _error(params_copy)
