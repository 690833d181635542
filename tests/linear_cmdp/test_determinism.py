"""linear_cmdp end to end on the smoke profile, in the session's smoke build: its stages run
once more give the same outputs, and the outputs the claims read are there, per verdict seed."""
from __future__ import annotations

import pytest



@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("linear_cmdp")
    root, m = out["root"], out["metrics"]
    assert m["seeds"] == [0, 1] and set(m["per_seed"]) == {"0", "1"}      # the smoke profile's verdict seeds
    for s in m["per_seed"].values():
        assert s["main"]["violating_episodes"] == 0 and s["primal_dual"]["violating_episodes"] > 0
        assert s["no_pessimism"]["violating_episodes"] >= 0 and s["optimum"]["lp_vs_backward_max_abs_diff"] < 1e-8
        assert set(s["main"]["setups"]) == {"tabular", "linear"}
    assert m["totals"]["main"]["runs"] == 8
    for png in ("regret_vs_K.png", "violations.png"):
        assert (root / "reports/linear_cmdp" / png).stat().st_size > 10_000
