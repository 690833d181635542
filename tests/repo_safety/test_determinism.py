"""repo_safety end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the outputs the claims read are there."""
from __future__ import annotations

import pytest



@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("repo_safety")
    root, m = out["root"], out["metrics"]
    assert sorted(m["per_seed"]) == [str(s) for s in m["seeds"]] and len(m["seeds"]) == 2   # smoke: seeds 0, 1
    for s in m["per_seed"].values():
        assert s["data"]["lambda_star"] > 0 and s["optimum"]["lp_pairs_gap"] < 1e-9
        assert s["sweep"]["fractions"] == [0.12, 0.3]
        for key in ("exact", "sampled"):
            assert 0 <= s[key]["repo"]["violating_fraction"] <= 1
        assert 0 <= s["exact"]["baseline_margin"]["violating_fraction"] <= 1
        assert s["exact"]["tightened"]["helpfulness_ratio"] > 0
    from datasets import load_from_disk

    ds = load_from_disk(str(root / "data/repo_safety/bandit"))
    assert len(ds) == 2 * 2 * 60 and set(ds.column_names) == {"seed", "fraction", "prompt", "harmful", "reward", "cost"}
    for png in ("sweep.png", "compensation.png", "curves.png"):
        assert (root / "reports/repo_safety" / png).stat().st_size > 10_000
