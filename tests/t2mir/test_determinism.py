"""t2mir end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

from stages.t2mir.icl import STUDY_VARIANTS


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("t2mir", volatile=tuple(f"data/t2mir/models/{v}_pyfunc/MLmodel" for v in STUDY_VARIANTS))  # MLmodel: save time, uuid
    m = out["metrics"]
    assert m["goal_overlap"] == 0 and m["env_matches_batched"] is True
    assert sorted(m["per_seed"]) == [str(s) for s in m["seeds"]] and len(m["seeds"]) == 2
    for v in STUDY_VARIANTS:
        assert 0.0 <= m[v]["heldout_accuracy"] <= 1.0 and 0.0 <= m[v]["shuffled_accuracy"] <= 1.0
    assert m["random_return"] <= m["oracle_return"]
    assert (out["root"] / "reports/t2mir/heldout.png").stat().st_size > 5_000
    assert (out["root"] / "reports/t2mir/rollout.gif").stat().st_size > 500
