"""escort_belief params: every profile validates; bad values stop before compute with a message
naming the key, the value and what is allowed."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.escort_belief.params import EscortBeliefParams
from tests.common.conftest import params_error, stops_before_compute, stops_without_input


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("escort_belief", EscortBeliefParams, real_params, profile=profile)
    assert p.prepare.dims == sorted(p.prepare.dims) and p.train.particles >= 4


def _error(data) -> str:
    return params_error("escort_belief", EscortBeliefParams, data)


def test_lambda_corr_out_of_range(params_copy):
    params_copy["escort_belief"]["default"]["train"]["escort"]["lambda_corr"] = 1.5
    msg = _error(params_copy)
    assert "escort_belief.default.train.escort.lambda_corr = 1.5" in msg and "<= 1" in msg


def test_unsorted_dims_refused(params_copy):
    params_copy["escort_belief"]["smoke"]["prepare"]["dims"] = [5, 2]
    assert "dims must be distinct and increasing" in _error(params_copy)


def test_cov_order_refused(params_copy):
    params_copy["escort_belief"]["paper"]["prepare"]["mixture"]["cov_min"] = 5.0
    assert "cov_min must be <= cov_max" in _error(params_copy)


def test_unknown_key_lists_allowed(params_copy):
    params_copy["escort_belief"]["default"]["evaluate"]["mmd_scale"] = [1.0]
    msg = _error(params_copy)
    assert "escort_belief.default.evaluate.mmd_scale: unknown key" in msg and "mmd_scales" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.escort_belief.prepare", {"escort_belief.smoke.train.particles": 2},
                               stage_env, python_exe)
    assert "escort_belief.smoke.train.particles = 2" in err


def test_train_without_data_exits_2_naming_the_stage(tmp_path, stage_env, python_exe):
    stops_without_input(tmp_path, "stages.escort_belief.train --shard 0", "dvc repro stages/escort_belief/dvc.yaml:escort_belief-prepare",
                        stage_env, python_exe)


def test_official_iters_out_of_range(params_copy):
    params_copy["escort_belief"]["default"]["train"]["escort_official"]["iters"] = 0
    msg = _error(params_copy)
    assert "escort_belief.default.train.escort_official.iters = 0" in msg and ">= 1" in msg


def test_reps_dmax_below_reps_refused(params_copy):
    params_copy["escort_belief"]["default"]["prepare"]["reps_dmax"] = 2
    assert "reps_dmax must be >= reps" in _error(params_copy)


def test_reps_at_uses_reps_dmax_only_at_the_largest_dim(real_params):
    _, p = load_study("escort_belief", EscortBeliefParams, real_params, profile="default")
    d = p.prepare.dims
    assert p.prepare.reps_at(d[-1]) == p.prepare.reps_dmax and p.prepare.reps_at(d[0]) == p.prepare.reps


def test_n_boot_out_of_range(params_copy):
    params_copy["escort_belief"]["default"]["evaluate"]["n_boot"] = 10
    msg = _error(params_copy)
    assert "escort_belief.default.evaluate.n_boot = 10" in msg and ">= 100" in msg
