"""nac_b end to end on the smoke profile, in a fresh copy of the checkout: the chain run twice
gives identical metrics, and the outputs the claims read are there."""
from __future__ import annotations

import pytest

from tests.common.conftest import smoke_chain_twice

CHAIN = ("stages.nac_b.prepare", "stages.nac_b.train", "stages.nac_b.evaluate")


@pytest.mark.slow
def test_smoke_chain_twice_gives_identical_metrics(tmp_path, stage_env, python_exe):
    out = smoke_chain_twice(tmp_path, stage_env, python_exe, CHAIN, "nac_b", ("prepare", "train", "metrics"))
    root, m = out["root"], out["metrics"]
    assert m["mdp"]["structure_violations"] == 0 and m["gain"]["lp_vs_rvi_max_abs_diff"] < 1e-8
    assert m["baseline"]["slope"] > 0.9
    assert set(m["batching"]["fixed_step"]["regret_by_batch"]) == {"1", "4"}
    for png in ("regret_vs_T.png", "batching.png"):
        assert (root / "reports/nac_b" / png).stat().st_size > 10_000
