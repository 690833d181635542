"""mairl_entropy end to end on the smoke profile, in a fresh copy of the checkout: the chain run
twice gives identical metrics, and the claims' figures are there."""
from __future__ import annotations

import pytest

from tests.common.conftest import smoke_chain_twice

CHAIN = ("stages.mairl_entropy.prepare", "stages.mairl_entropy.train", "stages.mairl_entropy.evaluate")


@pytest.mark.slow
def test_smoke_chain_twice_gives_identical_metrics(tmp_path, stage_env, python_exe):
    out = smoke_chain_twice(tmp_path, stage_env, python_exe, CHAIN, "mairl_entropy",
                            ("prepare", "metrics"))
    m = out["metrics"]
    assert m["uniqueness"]["max_pairwise_distance"] < 1e-8
    assert m["ambiguity"]["max_nash_gap"] < 1e-9
    assert -1.0 < m["recovery"]["reward_error"]["slope"] < 0.0
    assert (out["root"] / "reports/mairl_entropy/recovery.png").stat().st_size > 10_000
