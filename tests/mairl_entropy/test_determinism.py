"""mairl_entropy end to end on the smoke profile, in the session's smoke build: its stages run
once more give the same outputs, and the claims' figures are there."""
from __future__ import annotations

import pytest



@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("mairl_entropy")
    m = out["metrics"]
    assert sorted(m["per_seed"]) == ["0", "1"]
    for s in m["per_seed"].values():
        assert s["uniqueness"]["max_pairwise_distance"] < 1e-8
        assert s["transfer"]["max_policy_distance"] < s["transfer"]["max_estimate_error"] + 1e-9
        assert -1.0 < s["recovery"]["reward_error"]["slope"] < 0.0
    assert m["ambiguity"]["max_nash_gap"] < 1e-9
    for name in ("recovery.png", "transfer.png"):
        assert (out["root"] / f"reports/mairl_entropy/{name}").stat().st_size > 10_000
