"""webdancer params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

from stages.webdancer.params import PARAMS
from tests.helpers import params_error


def test_clip_high_must_not_be_below_clip(params_copy):
    params_copy["webdancer"]["default"]["train"]["rl"]["clip_high"] = 0.1
    assert "clip_high (0.1) must be >= clip (0.2)" in params_error("webdancer", PARAMS, params_copy)


def test_topics_must_cover_the_links(params_copy):
    params_copy["webdancer"]["paper"]["env"]["n_topics"] = 3
    assert "n_topics (3) must be >= k (4)" in params_error("webdancer", PARAMS, params_copy)


def test_heads_must_divide_width(params_copy):
    params_copy["webdancer"]["smoke"]["train"]["arch"]["heads"] = 3
    assert "must be a multiple of heads" in params_error("webdancer", PARAMS, params_copy)
