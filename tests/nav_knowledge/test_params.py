"""nav_knowledge params: every profile validates; a bad value stops the stage before any compute
with exit status 2 and a message naming the key, the value and what is allowed."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.nav_knowledge.params import NavKnowledgeParams

from tests.common.conftest import params_error, stops_before_compute, stops_without_input

STUDY = "nav_knowledge"


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study(STUDY, NavKnowledgeParams, real_params, profile=profile)
    assert 64 in p.replan.sizes and p.prepare.held_out < p.prepare.trajectories


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


def test_unknown_key_lists_allowed_keys(params_copy):
    params_copy[STUDY]["default"]["evaluate"]["relevence"] = 1.0
    msg = _error(params_copy)
    assert "nav_knowledge.default.evaluate.relevence: unknown key" in msg and "relevance" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.nav_knowledge.prepare", {"nav_knowledge.default.prepare.beta": -1.0},
                               stage_env, python_exe)
    assert "nav_knowledge.default.prepare.beta = -1.0" in err and "> 0" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.nav_knowledge.train", "dvc repro stages/nav_knowledge/dvc.yaml:nav_knowledge-prepare",
                        stage_env, python_exe)
