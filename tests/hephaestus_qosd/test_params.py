"""hephaestus_qosd params: every profile validates; a bad value stops the stage before any compute,
naming the key; a stage without its input names the stage to run."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.hephaestus_qosd.params import PARAMS
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("hephaestus_qosd", PARAMS, real_params, profile=profile)
    assert p.prepare.n_nodes == real_params["hephaestus_qosd"][profile]["prepare"]["n_nodes"]


def test_costs_must_be_known_and_nonlinear(params_copy):
    params_copy["hephaestus_qosd"]["default"]["prepare"]["costs"] = ["quadratic", "cubic"]
    assert "costs must be distinct kinds of" in params_error("hephaestus_qosd", PARAMS, params_copy)
    params_copy["hephaestus_qosd"]["default"]["prepare"]["costs"] = ["linear", "quadratic"]
    assert "must include the non-linear kinds" in params_error("hephaestus_qosd", PARAMS, params_copy)


def test_tau_must_exceed_one(params_copy):
    params_copy["hephaestus_qosd"]["paper"]["prepare"]["tau"] = 1.0
    assert "hephaestus_qosd.paper.prepare.tau" in params_error("hephaestus_qosd", PARAMS, params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["hephaestus_qosd"]["default"]["prepare"]["samples"] = 10
    msg = params_error("hephaestus_qosd", PARAMS, params_copy)
    assert "hephaestus_qosd.default.prepare.samples: unknown key" in msg and "n_nodes" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.hephaestus_qosd.prepare", {"hephaestus_qosd.smoke.prepare.n_nodes": 3},
                               stage_env, python_exe)
    assert "hephaestus_qosd.smoke.prepare.n_nodes = 3" in err and ">= 6" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.hephaestus_qosd.train", "dvc repro stages/hephaestus_qosd/dvc.yaml:hephaestus_qosd-prepare",
                        stage_env, python_exe)
