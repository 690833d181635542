"""mnl_assortment end to end on the smoke profile, in the session's smoke build: its stages run
once more give the same outputs, and the outputs the claims read are there."""
from __future__ import annotations

import pytest



@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("mnl_assortment")
    root, m = out["root"], out["metrics"]
    assert m["highs_max_abs_revenue_diff_all"] < 1e-7 and m["mle_max_abs_diff_vs_scipy_all"] < 1e-6
    assert [int(s) for s in m["per_seed"]] == m["seeds"] == [0, 1]
    for s in m["per_seed"].values():
        for key in ("new_slope_max", "greedy_slope_max", "ratio_min", "ratio_gram_min"):
            assert key in s["online"]
        assert set(s["online"]["region"]) >= {"new_max", "gram_max", "old_max"}
        assert s["offline"]["smallest_n"]["n"] == 50
    for png in ("regret_vs_t.png", "offline_vs_n.png"):
        assert (root / "reports/mnl_assortment" / png).stat().st_size > 10_000
