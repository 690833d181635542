"""llm_co_foarl end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

# an MLflow model's MLmodel records when it was saved and a random id; train.json records CPU
# seconds: not results
VOLATILE = ("data/llm_co_foarl/mlflow_model/MLmodel", "reports/llm_co_foarl/train.json")


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("llm_co_foarl", volatile=VOLATILE)
    m = out["metrics"]
    assert set(m["results"]) == {"sft", "foarl", "sft_more"}
    assert set(m["results"]["foarl"]) == {"tsp", "kp"} and m["claim"]["feasible_gain_mean"] is not None
    assert (out["root"] / "reports/llm_co_foarl/feasible_gap.png").stat().st_size > 5_000
