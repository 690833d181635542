"""repo_safety params: every profile validates; a bad value stops the stage before any compute with
exit status 2 and a message naming the key, the value and what is allowed."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.repo_safety.params import RepoSafetyParams

from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("repo_safety", RepoSafetyParams, real_params, profile=profile)
    assert min(p.prepare.fractions) >= 0.12          # STUDIES.md: f >= 0.12
    assert p.train.margin == 0.05                    # the calibration's margin
    assert p.evaluate.primary_fraction in p.prepare.fractions


def _error(data) -> str:
    return params_error("repo_safety", RepoSafetyParams, data)


def test_one_response_refused(params_copy):
    params_copy["repo_safety"]["default"]["prepare"]["n_responses"] = 1
    msg = _error(params_copy)
    assert "repo_safety.default.prepare.n_responses = 1" in msg and ">= 2" in msg


def test_fraction_out_of_range(params_copy):
    params_copy["repo_safety"]["smoke"]["prepare"]["fractions"] = [0.12, 1.5]
    msg = _error(params_copy)
    assert "repo_safety.smoke.prepare.fractions[1] = 1.5" in msg and "<= 0.9" in msg


def test_target_outside_the_correlation_range(params_copy):
    params_copy["repo_safety"]["default"]["prepare"]["correlation_target"] = 0.7
    assert "correlation_target 0.7 must lie in correlation_range" in _error(params_copy)


def test_primary_fraction_must_be_in_the_sweep(params_copy):
    params_copy["repo_safety"]["paper"]["evaluate"]["primary_fraction"] = 0.5
    assert "primary_fraction 0.5 must be one of prepare.fractions" in _error(params_copy)


def test_log_update_needs_positive_init(params_copy):
    params_copy["repo_safety"]["default"]["train"]["baseline_dual"]["init"] = 0.0
    assert "update 'log' needs init > 0" in _error(params_copy)


def test_unknown_update_lists_the_allowed(params_copy):
    params_copy["repo_safety"]["default"]["train"]["repo_dual"]["update"] = "adam"
    msg = _error(params_copy)
    assert "repo_safety.default.train.repo_dual.update = 'adam'" in msg and "'additive'" in msg


def test_string_steps_not_coerced(params_copy):
    params_copy["repo_safety"]["default"]["train"]["steps"] = "5000"
    assert "repo_safety.default.train.steps = '5000'" in _error(params_copy)


def test_unknown_key_lists_allowed_keys(params_copy):
    params_copy["repo_safety"]["default"]["train"]["margins"] = 0.1
    msg = _error(params_copy)
    assert "repo_safety.default.train.margins: unknown key" in msg and "margin" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.repo_safety.prepare", {"repo_safety.smoke.train.margin": -0.05},
                               stage_env, python_exe)
    assert "repo_safety.smoke.train.margin = -0.05" in err and ">= 0" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.repo_safety.train", "dvc repro stages/repo_safety/dvc.yaml:repo_safety-prepare",
                        stage_env, python_exe)
