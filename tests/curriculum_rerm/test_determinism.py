"""curriculum_rerm end to end on the smoke profile, in the session's smoke build: its stages run
once more give the same outputs, and the outputs the claims read are there."""
from __future__ import annotations

import pytest



@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("curriculum_rerm")
    root, m = out["root"], out["metrics"]
    assert len(m["ridge"]["good_beats_direct_frac"]) == 3 and m["digits"]["replications"] == 3
    assert m["seeds"] == [0, 1] and set(m["per_seed"]) == {"0", "1"}
    assert 0 <= m["ridge"]["good_beats_direct_frac_min"] <= 1
    for png in ("ridge_lambda.png", "digits_paired.png"):
        assert (root / "reports/curriculum_rerm" / png).stat().st_size > 10_000
