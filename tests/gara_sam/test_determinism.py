"""gara_sam end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = ("data/gara_sam/model/MLmodel",)


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("gara_sam", volatile=VOLATILE)
    m = out["metrics"]
    assert set(m["per_seed"]) == {str(s) for s in m["seeds"]} and len(m["seeds"]) == 2
    for s, fig in m["per_seed"].items():
        for key in ("gara_seen_gain", "gara_rank_max_over_min", "gara_clean_drop", "gara_minus_lora_corrupt"):
            assert isinstance(fig[key], float), (s, key)
        assert fig["rank"]["gara_const"]["max_over_min"] == 1.0        # a gate blind to its input: one rank
        assert set(fig["iou"]) == {"frozen", "lora", "gara", "gara_const"}
    assert (out["root"] / "reports/gara_sam/iou_by_group.png").stat().st_size > 5_000
