"""labyrinth params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.labyrinth.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("labyrinth", PARAMS, real_params, profile=profile)
    assert p.prepare.n_train == real_params["labyrinth"][profile]["prepare"]["n_train"]


def test_maze_side_must_be_at_least_3(params_copy):
    params_copy["labyrinth"]["default"]["prepare"]["n"] = 2
    assert "labyrinth.default.prepare.n = 2" in params_error("labyrinth", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["labyrinth"]["default"]["prepare"]["samples"] = 10
    msg = params_error("labyrinth", PARAMS, params_copy)
    assert "labyrinth.default.prepare.samples: unknown key" in msg and "n_train" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.labyrinth.prepare", {"labyrinth.smoke.prepare.loop_fraction": 3},
                               stage_env, python_exe)
    assert "labyrinth.smoke.prepare.loop_fraction = 3" in err and "<= 1" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.labyrinth.train", "dvc repro stages/labyrinth/dvc.yaml:labyrinth-prepare",
                        stage_env, python_exe)
