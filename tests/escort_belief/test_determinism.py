"""escort_belief end to end on the smoke profile, in a fresh copy of the checkout: the chain run
twice gives identical metrics."""
from __future__ import annotations

import pytest

from tests.common.conftest import smoke_chain_twice

CHAIN = ("stages.escort_belief.prepare", "stages.escort_belief.train", "stages.escort_belief.evaluate")


@pytest.mark.slow
def test_smoke_chain_twice_gives_identical_metrics(tmp_path, stage_env, python_exe):
    out = smoke_chain_twice(tmp_path, stage_env, python_exe, CHAIN, "escort_belief", ("prepare", "metrics"))
    m, root = out["metrics"], out["root"]
    assert set(m["mmd"]) == {"pf", "svgd", "escort", "escort_official", "pf_resampled", "exact"}
    assert m["ratios"]["mmd"]["escort_official_over_pf_dmax"] > 0
    assert m["ratios"]["mmd"]["escort_over_pf_dmax"] > 0
    assert (root / "reports/escort_belief/accuracy_vs_dim.png").stat().st_size > 10_000
