"""hephaestus_qosd params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.hephaestus_qosd.params import PARAMS
from tests.helpers import params_error


def test_costs_must_be_known_and_nonlinear(params_copy):
    params_copy["hephaestus_qosd"]["default"]["prepare"]["costs"] = ["quadratic", "cubic"]
    assert "costs must be distinct kinds of" in params_error("hephaestus_qosd", PARAMS, params_copy)
    params_copy["hephaestus_qosd"]["default"]["prepare"]["costs"] = ["linear", "quadratic"]
    assert "must include the non-linear kinds" in params_error("hephaestus_qosd", PARAMS, params_copy)


def test_tau_must_exceed_one(params_copy):
    params_copy["hephaestus_qosd"]["paper"]["prepare"]["tau"] = 1.0
    assert "hephaestus_qosd.paper.prepare.tau" in params_error("hephaestus_qosd", PARAMS, params_copy)
