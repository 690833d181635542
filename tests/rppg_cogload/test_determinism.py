"""rppg_cogload end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and every claim's metric and control is there for every verdict seed."""
from __future__ import annotations

import pytest

from stages.common.claims import load_claims, lookup
from tests.helpers import REPO


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("rppg_cogload", volatile=("data/rppg_cogload/model/MLmodel",))
    m = out["metrics"]
    assert list(m["per_seed"]) == [str(s) for s in m["seeds"]] and len(m["seeds"]) >= 2
    for claim in load_claims(REPO / "stages/rppg_cogload/claims.yaml").claims:
        if claim.retired:
            continue
        for key in filter(None, (claim.metric, claim.control)):
            for seed_metrics in m["per_seed"].values():
                v = lookup(seed_metrics, key)
                assert isinstance(v, float) and v == v, key       # measured (not NaN) on smoke
    assert (out["root"] / "reports/rppg_cogload/hr_mae.png").stat().st_size > 5_000
