"""mairl_entropy params: every profile validates; a bad value stops the stage before any compute
with exit status 2 and a message naming the key, the value and what is allowed."""
from __future__ import annotations

import pytest

from stages.common.params import PROFILES, load_study
from stages.mairl_entropy.params import MairlParams

from tests.common.conftest import params_error, stops_before_compute


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_validates(real_params, profile):
    _, p = load_study("mairl_entropy", MairlParams, real_params, profile=profile)
    assert p.train.tau > 0 and p.train.recovery.n_min < p.train.recovery.n_max


def _error(data) -> str:
    return params_error("mairl_entropy", MairlParams, data)


def test_gamma_must_be_below_one(params_copy):
    params_copy["mairl_entropy"]["default"]["prepare"]["gamma"] = 1.0
    msg = _error(params_copy)
    assert "mairl_entropy.default.prepare.gamma = 1.0" in msg and "< 1" in msg


def test_tau_must_be_positive(params_copy):
    params_copy["mairl_entropy"]["smoke"]["train"]["tau"] = 0.0
    msg = _error(params_copy)
    assert "mairl_entropy.smoke.train.tau = 0.0" in msg and "> 0" in msg


def test_unknown_sampling_lists_the_allowed(params_copy):
    params_copy["mairl_entropy"]["default"]["train"]["recovery"]["sampling"] = "trajectories"
    msg = _error(params_copy)
    assert "recovery.sampling = 'trajectories'" in msg and "'generative'" in msg and "'occupancy'" in msg


def test_reversed_sample_range_refused(params_copy):
    params_copy["mairl_entropy"]["paper"]["train"]["recovery"]["n_min"] = 10 ** 7
    assert "n_min (10000000) must be < n_max" in _error(params_copy)


def test_unknown_key_lists_allowed_keys(params_copy):
    params_copy["mairl_entropy"]["default"]["train"]["solver"]["dampening"] = 0.5
    msg = _error(params_copy)
    assert "solver.dampening: unknown key" in msg and "damping" in msg


def test_stage_exits_2_on_bad_param_before_compute(tmp_path, stage_env, python_exe):
    err = stops_before_compute(tmp_path, "stages.mairl_entropy.prepare", {"mairl_entropy.smoke.prepare.n_actions": [2, 1]},
                               stage_env, python_exe)
    assert "mairl_entropy.smoke.prepare.n_actions[1] = 1" in err and ">= 2" in err
