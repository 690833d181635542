"""nav_knowledge end to end on the smoke profile, in a fresh copy of the checkout: the chain run
twice gives identical reports (the replanning timings aside, which vary run to run), the claims'
metrics and the plots are there."""
from __future__ import annotations

import pytest

from tests.common.conftest import run_chain

from .conftest import REPO

CHAIN = ("stages.nav_knowledge.prepare", "stages.nav_knowledge.replan", "stages.nav_knowledge.train",
         "stages.nav_knowledge.evaluate")
TIMED = ("speedup_64", "lpa_speedup_64", "speedup_vs_scipy_64", "speedup_vs_scipy_largest", "speedup_vs_dijkstra_largest")


def _deterministic(reports: dict) -> dict:
    out = {k: v for k, v in reports.items() if k != "replan"}
    out["metrics"] = {k: v for k, v in reports["metrics"].items() if k != "replan"}
    out["metrics"]["replan"] = {k: v for k, v in reports["metrics"]["replan"].items() if k not in TIMED}
    return out


@pytest.mark.slow
def test_smoke_chain_twice_gives_identical_metrics(tmp_path, stage_env, python_exe):
    from stages.common.checkout import copy_checkout

    root = copy_checkout(REPO, tmp_path / "repo", profile="smoke")
    names = ("prepare", "train", "replan", "metrics")
    first = run_chain(root, stage_env, python_exe, CHAIN, "nav_knowledge", names)
    second = run_chain(root, stage_env, python_exe, CHAIN, "nav_knowledge", names)
    assert _deterministic(first) == _deterministic(second)
    m = first["metrics"]
    assert m["replan"]["identical_all"] == 1.0 and m["replan"]["events_total"] > 0
    for key in ("auroc_relevant", "auroc_all", "nll", "ess"):
        assert key in m
    for png in ("posterior_grid.png", "auroc_ess.png", "replan_time.png"):
        assert (root / "reports/nav_knowledge" / png).stat().st_size > 10_000
