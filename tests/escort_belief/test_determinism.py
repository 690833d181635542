"""escort_belief end to end on the smoke profile, in the session's smoke build: its stages run
once more give the same outputs."""
from __future__ import annotations

import pytest



@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("escort_belief")
    m, root = out["metrics"], out["root"]
    assert set(m["mmd"]) == {"pf", "svgd", "escort", "escort_official", "pf_resampled", "exact"}
    assert m["ratios"]["mmd"]["escort_official_over_pf_dmax"] > 0
    assert m["ratios"]["mmd"]["escort_over_pf_dmax"] > 0
    assert (root / "reports/escort_belief/accuracy_vs_dim.png").stat().st_size > 10_000
