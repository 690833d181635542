"""mtl_kd params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.mtl_kd.params import PARAMS
from tests.helpers import params_error, stops_without_input


def test_unknown_variant_is_named(params_copy):
    params_copy["mtl_kd"]["default"]["prepare"]["unseen"] = ["vrpbtw"]
    assert "variant 'vrpbtw' is not one of" in params_error("mtl_kd", PARAMS, params_copy)


def test_seen_and_unseen_must_not_overlap(params_copy):
    params_copy["mtl_kd"]["paper"]["prepare"]["unseen"] = ["cvrp"]
    assert "overlap" in params_error("mtl_kd", PARAMS, params_copy)


def test_heads_must_divide_dim(params_copy):
    params_copy["mtl_kd"]["default"]["train"]["student"]["heads"] = 5
    assert "must be a multiple of heads" in params_error("mtl_kd", PARAMS, params_copy)


def test_the_rl_only_control_must_get_the_students_whole_budget(params_copy):
    params_copy["mtl_kd"]["default"]["train"]["rl_mtl"]["steps"] = 291
    assert ("train.rl_mtl must get the distilled student's whole budget: 290 steps (3 x 80 teacher + 50 "
            "student) and 6960 instances") in params_error("mtl_kd", PARAMS, params_copy)
    params_copy["mtl_kd"]["default"]["train"]["rl_mtl"].update(steps=290, batch=25)
    assert "must hold the same number of each of the 3 seen variants" in params_error("mtl_kd", PARAMS, params_copy)


def test_training_starts_at_most_n(params_copy):
    params_copy["mtl_kd"]["default"]["train"]["starts"] = 21
    assert "train.starts (21) must be at most n (20)" in params_error("mtl_kd", PARAMS, params_copy)


def test_evaluate_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.mtl_kd.evaluate",
                        "data/mtl_kd/testsets (made by stage mtl_kd-prepare) is missing; "
                        "run `dvc repro stages/mtl_kd/dvc.yaml:mtl_kd-prepare`", stage_env, python_exe)
