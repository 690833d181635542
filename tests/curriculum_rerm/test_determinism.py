"""curriculum_rerm end to end on the smoke profile, in a fresh copy of the checkout: the chain run
twice gives identical metrics, and the outputs the claims read are there."""
from __future__ import annotations

import pytest

from tests.common.conftest import smoke_chain_twice

CHAIN = ("stages.curriculum_rerm.train", "stages.curriculum_rerm.evaluate")


@pytest.mark.slow
def test_smoke_chain_twice_gives_identical_metrics(tmp_path, stage_env, python_exe):
    out = smoke_chain_twice(tmp_path, stage_env, python_exe, CHAIN, "curriculum_rerm", ("train", "metrics"))
    root, m = out["root"], out["metrics"]
    assert len(m["ridge"]["good_beats_direct_frac"]) == 3 and m["digits"]["seeds"] == 3
    assert 0 <= m["ridge"]["good_beats_direct_frac_min"] <= 1
    for png in ("ridge_lambda.png", "digits_paired.png"):
        assert (root / "reports/curriculum_rerm" / png).stat().st_size > 10_000
