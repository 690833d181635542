"""t2mir end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("t2mir")
    m = out["metrics"]
    assert m["best_test_mse"] <= m["baseline_test_mse"]
    assert (out["root"] / "reports/t2mir/test_mse.png").stat().st_size > 5_000
