"""linear_cmdp end to end on the smoke profile, in the session's smoke build: its stages run
once more give the same outputs, and the outputs the claims read are there."""
from __future__ import annotations

import pytest



@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("linear_cmdp")
    root, m = out["root"], out["metrics"]
    assert m["main"]["violating_episodes"] == 0 and m["primal_dual"]["violating_episodes"] > 0
    assert m["optimum"]["lp_vs_backward_max_abs_diff"] < 1e-8
    assert set(m["main"]["setups"]) == {"tabular", "linear"}
    for png in ("regret_vs_K.png", "violations.png"):
        assert (root / "reports/linear_cmdp" / png).stat().st_size > 10_000
