"""autosep params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.autosep.params import PARAMS
from tests.helpers import params_error


def test_finer_block_must_be_finer(params_copy):
    params_copy["autosep"]["default"]["train"]["blackbox"]["block"] = 2
    assert "must be finer (smaller) than train.blackbox.block" in params_error("autosep", PARAMS, params_copy)


def test_blind_noise_must_exceed_compare_noise(params_copy):
    params_copy["autosep"]["paper"]["train"]["ablations"]["blind_compare_noise"] = 0.2
    assert "must exceed train.blackbox.compare_noise" in params_error("autosep", PARAMS, params_copy)


def test_label_edit_names_the_choices(params_copy):
    params_copy["autosep"]["default"]["train"]["search"]["label_edit"] = "oracle"
    msg = params_error("autosep", PARAMS, params_copy)
    assert "label_edit" in msg and "prototype" in msg and "pair" in msg
