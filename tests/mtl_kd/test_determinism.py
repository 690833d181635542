"""mtl_kd end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest


# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = ("data/mtl_kd/student_model/MLmodel",)


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("mtl_kd", volatile=VOLATILE)
    m = out["metrics"]
    assert sorted(m["per_seed"]) == ["0", "1"]                           # the smoke profile's verdict seeds
    assert m["infeasible_solutions"] == 0
    assert m["r3c"]["r3c_gap"] <= m["r3c"]["plain_gap"] + 1e-9          # accept-if-better never worsens
    assert m["seen"]["student_over_teacher"] > 0
    assert (out["root"] / "reports/mtl_kd/gaps.png").stat().st_size > 5_000
