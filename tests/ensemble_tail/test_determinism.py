"""ensemble_tail end to end on the smoke profile, in the session's smoke build: its stages run
once more give the same outputs, and the outputs the claims read are there."""
from __future__ import annotations

import math

import pytest



@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("ensemble_tail")
    root, m = out["root"], out["metrics"]
    lp = m["lp"]
    assert lp["n_grid"] == [25, 50, 100, 200] and lp["replications"] == 300
    for key in ("upper_over_base_at_compare_n", "slope_ratio"):
        assert math.isfinite(lp["move"][key])
    assert math.isfinite(lp["base"]["r2_loglog_minus_loglin"]) and "regression" in m
    for png in ("tails.png", "base_fits.png"):
        assert (root / "reports/ensemble_tail" / png).stat().st_size > 10_000
