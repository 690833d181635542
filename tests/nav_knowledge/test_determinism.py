"""nav_knowledge end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs (the replanning timings aside, which vary run to run), the claims'
metrics and the plots are there."""
from __future__ import annotations

import pytest

# the replanning benchmark's figures and its plot are wall times: they only have to exist
VOLATILE = ("reports/nav_knowledge/replan.json", "reports/nav_knowledge/replan_time.png")


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    first = rerun_study("nav_knowledge", volatile=VOLATILE)
    root, m = first["root"], first["metrics"]
    assert m["replan"]["identical_all"] == 1.0 and m["replan"]["events_total"] > 0
    assert sorted(m["per_seed"]) == [str(s) for s in m["seeds"]] and len(m["seeds"]) == 2   # smoke: seeds 0, 1
    for seed in m["per_seed"].values():
        for key in ("auroc_relevant", "auroc_all", "nll", "ess", "replan"):
            assert key in seed
    for png in ("posterior_grid.png", "auroc_ess.png", "replan_time.png"):
        assert (root / "reports/nav_knowledge" / png).stat().st_size > 10_000
