"""escort_belief end to end on the smoke profile, in the session's smoke build: its stages run
once more give the same outputs."""
from __future__ import annotations

import pytest


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("escort_belief")
    m, root = out["metrics"], out["root"]
    assert set(m["mmd"]) == {"pf", "svgd", "escort", "escort_official", "pf_resampled", "exact"}
    assert m["seeds"] == [0, 1] and set(m["per_seed"]) == {"0", "1"}          # the smoke verdict seeds
    for s in ("0", "1"):
        r = m["per_seed"][s]["ratios"]["mmd"]
        assert r["escort_over_pf_dmax"] > 0 and r["svgd_over_pf_dmax"] > 0 and r["escort_official_over_pf_dmax"] > 0
        assert r["escort_over_pf_dmax_ci_low"] <= r["escort_over_pf_dmax_ci_high"]
    # each seed is its own repetition: its own problems, so its own figures
    ratio = {s: m["per_seed"][s]["ratios"]["mmd"]["escort_over_pf_dmax"] for s in ("0", "1")}
    assert ratio["0"] != ratio["1"]
    assert (root / "reports/escort_belief/accuracy_vs_dim.png").stat().st_size > 10_000
