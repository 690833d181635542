"""mpo end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = ("data/mpo/models/discovered/MLmodel", "data/mpo/models/dpo/MLmodel")


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("mpo", volatile=VOLATILE)
    m = out["metrics"]
    for key in ("noise_dpo1_ratio_max", "mixed_orpo_over_dpo", "discovered_over_tuned_dpo_min",
                "discovered_minus_dpo1_min", "discovered_score_target", "best_baseline_target",
                "corner_search_score_target"):
        assert isinstance(m[key], float)
        assert all(isinstance(m["per_seed"][s][key], float) for s in ("0", "1"))
    assert (out["root"] / "reports/mpo/return_vs_noise.png").stat().st_size > 5_000
