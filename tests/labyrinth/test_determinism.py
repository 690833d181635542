"""labyrinth end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("labyrinth", volatile=tuple(f"data/labyrinth/models/{m}/MLmodel" for m in ("bc_pyfunc", "dagger_pyfunc")))  # MLmodel: save time, uuid
    m = out["metrics"]
    assert m["split_overlap"] == 0 and m["expert_test_success"] == 1.0
    assert 0.0 <= m["bc"]["test_success"] <= 1.0
    assert (out["root"] / "reports/labyrinth/success.png").stat().st_size > 5_000
    assert (out["root"] / "reports/labyrinth/rollouts.gif").stat().st_size > 1_000
