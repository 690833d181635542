"""gara_sam params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.gara_sam.params import PARAMS
from tests.helpers import params_error


def test_size_must_pool_twice(params_copy):
    params_copy["gara_sam"]["default"]["prepare"]["size"] = 30
    assert "size must be a multiple of 4" in params_error("gara_sam", PARAMS, params_copy)


def test_adapt_shapes_must_be_known(params_copy):
    params_copy["gara_sam"]["default"]["prepare"]["adapt_shapes"] = ["ellipse", "star"]
    assert "adapt_shapes must be distinct kinds of" in params_error("gara_sam", PARAMS, params_copy)


def test_width_must_suit_groupnorm(params_copy):
    params_copy["gara_sam"]["paper"]["train"]["width"] = 10
    assert "width must be a multiple of 4" in params_error("gara_sam", PARAMS, params_copy)
