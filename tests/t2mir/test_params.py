"""t2mir params: the study's own rules. What every study must meet (each profile validates,
an unknown key, a bad value, a missing input) is tests/common/test_study_contract.py."""
from __future__ import annotations

import pytest

from stages.t2mir.params import PARAMS
from tests.helpers import params_error


@pytest.mark.parametrize("key, value, msg", [
    ("heads", 5, "must be a multiple of heads"),
    ("top_k", 7, "top_k (7) must be <= n_token"),
    ("d", 9, "must be even"),
])
def test_bad_model_shapes(params_copy, key, value, msg):
    train = params_copy["t2mir"]["default"]["train"]
    if key == "d":
        train.update(d=9, heads=3)
    else:
        train[key] = value
    assert msg in params_error("t2mir", PARAMS, params_copy)


def test_too_few_tasks_on_a_side(params_copy):
    params_copy["t2mir"]["default"]["prepare"].update(size=3, holdout=0.1)
    assert "each side needs >= 2" in params_error("t2mir", PARAMS, params_copy)
