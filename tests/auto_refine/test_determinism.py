"""auto_refine end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = ("data/auto_refine/model/MLmodel",)


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("auto_refine", volatile=VOLATILE)
    m = out["metrics"]
    assert all(m["per_seed"][s]["test_train_subject_overlap"] == 0 for s in m["per_seed"])
    assert set(m["arms"]) == {"refine", "refine_noret", "norefine"}
    assert all(v is not None for v in m["claim"].values())
    assert (out["root"] / "reports/auto_refine/em.png").stat().st_size > 5_000
