"""mairl_entropy params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.mairl_entropy.params import MairlParams

from tests.helpers import params_error


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


def test_control_temperature_must_be_below_tau(params_copy):
    params_copy["mairl_entropy"]["default"]["train"]["tau_control"] = 1.0
    msg = _error(params_copy)
    assert "tau_control (1.0) must be < tau (1.0)" in msg


def test_transfer_needs_a_demonstration(params_copy):
    params_copy["mairl_entropy"]["smoke"]["train"]["transfer"]["n"] = 0
    msg = _error(params_copy)
    assert "mairl_entropy.smoke.train.transfer.n = 0" in msg and ">= 1" in msg
