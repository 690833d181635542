"""purpcode params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.purpcode.params import PARAMS
from tests.helpers import params_error


def test_skip_only_informational_ids(params_copy):
    params_copy["purpcode"]["default"]["prepare"]["skip"] = ["B404", "B602"]
    assert "skip may hold only bandit's informational ids" in params_error("purpcode", PARAMS, params_copy)


def test_heads_must_divide_width(params_copy):
    params_copy["purpcode"]["paper"]["train"]["model"]["heads"] = 5
    assert "must be a multiple of heads" in params_error("purpcode", PARAMS, params_copy)
