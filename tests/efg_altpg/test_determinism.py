"""efg_altpg end to end on the smoke profile, in a fresh copy of the checkout: the chain run
twice gives identical metrics (train.json holds timings, so it is not compared), and every
claim's metric is present."""
from __future__ import annotations

import pytest

from stages.common.claims import load_claims, lookup

from tests.common.conftest import smoke_chain_twice

from .conftest import REPO

CHAIN = ("stages.efg_altpg.prepare", "stages.efg_altpg.train", "stages.efg_altpg.evaluate")


@pytest.mark.slow
def test_smoke_chain_twice_gives_identical_metrics(tmp_path, stage_env, python_exe):
    out = smoke_chain_twice(tmp_path, stage_env, python_exe, CHAIN, "efg_altpg",
                            ("prepare", "metrics"))
    root, m = out["root"], out["metrics"]
    assert out["prepare"]["max_abs_diff"] < 1e-12
    assert m["exploitability_check_max_abs_diff"] < 1e-9
    for claim in load_claims(REPO / "stages/efg_altpg/claims.yaml").claims:
        assert isinstance(lookup(m, claim.metric), (int, float)), claim.metric
    for png in ("curves.png", "rate.png"):
        assert (root / "reports/efg_altpg" / png).stat().st_size > 10_000
