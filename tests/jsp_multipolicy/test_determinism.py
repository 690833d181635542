"""jsp_multipolicy end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs (CP-SAT under a deterministic-time limit, seeded sampling), and the
figures the claims read are there."""
from __future__ import annotations

import pytest

# timings, and an MLflow model's MLmodel (when it was saved, a random id, the scratch paths of its artifacts)
VOLATILE = ("reports/jsp_multipolicy/prepare.json", "reports/jsp_multipolicy/train.json",
            "data/jsp_multipolicy/mlflow/single/MLmodel", "data/jsp_multipolicy/mlflow/multi/MLmodel")


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("jsp_multipolicy", volatile=VOLATILE)
    m = out["metrics"]
    for key in ("gap10", "gap15", "gapflow"):
        assert {"single", "multi", "SPT", "MWKR", "MOPNR", "multi_minus_single_ci_high"} <= set(m[key])
    assert (out["root"] / "reports/jsp_multipolicy/gaps.png").stat().st_size > 5_000
