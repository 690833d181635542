"""nac_b end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the outputs the claims read are there."""
from __future__ import annotations

import pytest



@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("nac_b")
    root, m = out["root"], out["metrics"]
    assert m["mdp"]["structure_violations"] == 0 and m["gain"]["lp_vs_rvi_max_abs_diff"] < 1e-8
    assert m["baseline"]["slope"] > 0.9
    assert set(m["batching"]["fixed_step"]["regret_by_batch"]) == {"1", "4"}
    for png in ("regret_vs_T.png", "batching.png"):
        assert (root / "reports/nac_b" / png).stat().st_size > 10_000
