"""purpcode end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = ("data/purpcode/model/MLmodel",)


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("purpcode", volatile=VOLATILE)
    m = out["metrics"]
    assert m["train_test_overlap"] == 0 and m["held_out_prompts"] > 0
    assert set(m["methods"]) == {"base", "rule", "verified_sft", "purpcode", "safety_only", "utility_only"}
    for key in ("insecure_drop", "utility_delta", "overrefusal_delta", "rule_insecure_drop",
                "safety_only_overrefusal_delta", "safety_only_utility_delta", "utility_only_insecure_drop"):
        assert -1 <= m["claim"][key] <= 1
    assert (out["root"] / "reports/purpcode/safety_utility.png").stat().st_size > 5_000
