"""mnl_assortment end to end on the smoke profile, in a fresh copy of the checkout: the chain run
twice gives identical metrics, and the outputs the claims read are there."""
from __future__ import annotations

import pytest

from tests.common.conftest import smoke_chain_twice

CHAIN = ("stages.mnl_assortment.prepare", "stages.mnl_assortment.train", "stages.mnl_assortment.evaluate")


@pytest.mark.slow
def test_smoke_chain_twice_gives_identical_metrics(tmp_path, stage_env, python_exe):
    out = smoke_chain_twice(tmp_path, stage_env, python_exe, CHAIN, "mnl_assortment",
                            ("prepare", "train", "metrics"))
    root, m = out["root"], out["metrics"]
    assert m["highs"]["max_abs_revenue_diff"] < 1e-7 and m["mle"]["max_abs_diff_vs_scipy"] < 1e-6
    assert m["online"]["old_slope_min"] > 0.9
    for key in ("new_slope_max", "ratio_min"):
        assert key in m["online"]
    assert m["offline"]["smallest_n"]["n"] == 50
    for png in ("regret_vs_t.png", "offline_vs_n.png"):
        assert (root / "reports/mnl_assortment" / png).stat().st_size > 10_000
