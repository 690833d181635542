"""ensemble_tail end to end on the smoke profile, in a fresh copy of the checkout: the chain run
twice gives identical metrics, and the outputs the claims read are there."""
from __future__ import annotations

import math

import pytest

from tests.common.conftest import smoke_chain_twice

CHAIN = ("stages.ensemble_tail.train", "stages.ensemble_tail.evaluate")


@pytest.mark.slow
def test_smoke_chain_twice_gives_identical_metrics(tmp_path, stage_env, python_exe):
    out = smoke_chain_twice(tmp_path, stage_env, python_exe, CHAIN, "ensemble_tail", ("metrics",))
    root, m = out["root"], out["metrics"]
    lp = m["lp"]
    assert lp["n_grid"] == [25, 50, 100, 200] and lp["replications"] == 300
    for key in ("upper_over_base_at_compare_n", "slope_ratio"):
        assert math.isfinite(lp["move"][key])
    assert math.isfinite(lp["base"]["r2_loglog_minus_loglin"]) and "regression" in m
    for png in ("tails.png", "base_fits.png"):
        assert (root / "reports/ensemble_tail" / png).stat().st_size > 10_000
