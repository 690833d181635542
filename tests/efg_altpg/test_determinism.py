"""efg_altpg end to end on the smoke profile, in the session's smoke build: its stages run
once more give the same outputs (train.json's timings aside), and every claim's metric and
control is present for every verdict seed."""
from __future__ import annotations

import pytest

from stages.common.claims import load_claims, lookup

from .conftest import REPO


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("efg_altpg")
    root, m = out["root"], out["metrics"]
    assert out["prepare"]["max_abs_diff"] < 1e-12
    assert m["exploitability_check_max_abs_diff"] < 1e-9
    assert list(m["per_seed"]) == [str(s) for s in m["seeds"]] and len(m["seeds"]) >= 2
    for claim in load_claims(REPO / "stages/efg_altpg/claims.yaml").claims:
        for key in filter(None, (claim.metric, claim.control)):
            for seed_metrics in m["per_seed"].values():
                assert isinstance(lookup(seed_metrics, key), (int, float)), key
    for png in ("curves.png", "rate.png"):
        assert (root / "reports/efg_altpg" / png).stat().st_size > 10_000
