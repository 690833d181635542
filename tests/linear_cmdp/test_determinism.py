"""linear_cmdp end to end on the smoke profile, in a fresh copy of the checkout: the chain run
twice gives identical metrics, and the outputs the claims read are there."""
from __future__ import annotations

import pytest

from tests.common.conftest import smoke_chain_twice

CHAIN = ("stages.linear_cmdp.prepare", "stages.linear_cmdp.train", "stages.linear_cmdp.evaluate")


@pytest.mark.slow
def test_smoke_chain_twice_gives_identical_metrics(tmp_path, stage_env, python_exe):
    out = smoke_chain_twice(tmp_path, stage_env, python_exe, CHAIN, "linear_cmdp", ("prepare", "metrics"))
    root, m = out["root"], out["metrics"]
    assert m["main"]["violating_episodes"] == 0 and m["primal_dual"]["violating_episodes"] > 0
    assert m["optimum"]["lp_vs_backward_max_abs_diff"] < 1e-8
    assert set(m["main"]["setups"]) == {"tabular", "linear"}
    for png in ("regret_vs_K.png", "violations.png"):
        assert (root / "reports/linear_cmdp" / png).stat().st_size > 10_000
