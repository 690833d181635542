"""sepo params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.sepo.params import PARAMS
from tests.helpers import params_error


def test_temperatures_must_decrease(params_copy):
    params_copy["sepo"]["default"]["train"]["rwft"]["temperatures"] = [0.1, 1.0]
    assert "temperatures must be > 0 and strictly decreasing" in params_error("sepo", PARAMS, params_copy)


def test_motif_must_be_dna_and_fit(params_copy):
    params_copy["sepo"]["default"]["prepare"]["motif"] = "TAXA"
    assert "motif must be over ACGT" in params_error("sepo", PARAMS, params_copy)
    params_copy["sepo"]["default"]["prepare"]["motif"] = "TATATATATA"
    assert "longer than the sequences" in params_error("sepo", PARAMS, params_copy)


def test_best_of_must_increase(params_copy):
    params_copy["sepo"]["paper"]["evaluate"]["best_of"] = [4, 2]
    assert "best_of must be >= 1 and strictly increasing" in params_error("sepo", PARAMS, params_copy)


def test_snis_samples_must_be_positive(params_copy):
    params_copy["sepo"]["default"]["train"]["sepo"]["snis_samples"] = 0
    msg = params_error("sepo", PARAMS, params_copy)
    assert "snis_samples" in msg and "greater than or equal to 1" in msg
