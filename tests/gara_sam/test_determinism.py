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
    for key in ("gara_seen_gain", "gara_rank_max_over_min", "gara_clean_drop", "gara_minus_lora_corrupt"):
        assert isinstance(m[key], float), key
    assert m["controls"]["seen_gain_frozen"] == 0.0
    assert m["rank"]["gara_const"]["max_over_min"] == 1.0        # a gate blind to its input: one rank
    assert set(m["iou"]) == {"frozen", "lora", "gara", "gara_const", "full"}
    assert (out["root"] / "reports/gara_sam/iou_by_group.png").stat().st_size > 5_000
