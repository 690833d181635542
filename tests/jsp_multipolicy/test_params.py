"""jsp_multipolicy params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.jsp_multipolicy.params import PARAMS
from tests.helpers import params_error, stops_without_input


def test_samples_must_split_over_policies(params_copy):
    params_copy["jsp_multipolicy"]["default"]["evaluate"]["samples"] = 30
    assert "evaluate.samples (30) must be a multiple of train.n_policies (4)" in params_error(
        "jsp_multipolicy", PARAMS, params_copy)


def test_evaluate_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.jsp_multipolicy.evaluate",
                        "data/jsp_multipolicy/test.npz (made by stage jsp_multipolicy-prepare) is missing; "
                        "run `dvc repro stages/jsp_multipolicy/dvc.yaml:jsp_multipolicy-prepare`", stage_env, python_exe)


def test_l2d_params_are_checked(params_copy):
    params_copy["jsp_multipolicy"]["default"]["train"]["l2d"]["episodes"] = 1
    msg = params_error("jsp_multipolicy", PARAMS, params_copy)
    assert "l2d.episodes" in msg and "greater than or equal to 2" in msg
    del params_copy["jsp_multipolicy"]["default"]["train"]["l2d"]["episodes"]
    params_copy["jsp_multipolicy"]["default"]["train"]["l2d"]["epochs"] = 4
    msg = params_error("jsp_multipolicy", PARAMS, params_copy)
    assert "epochs" in msg and "episodes" in msg
