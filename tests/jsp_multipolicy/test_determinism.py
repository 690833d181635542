"""jsp_multipolicy end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs (CP-SAT under a deterministic-time limit, seeded sampling), and the
figures the claims read are there for every verdict seed."""
from __future__ import annotations

import pytest

# timings, and an MLflow model's MLmodel (when it was saved, a random id, the scratch paths of its artifacts)
VOLATILE = ("reports/jsp_multipolicy/prepare.json", "reports/jsp_multipolicy/train.json",
            "data/jsp_multipolicy/mlflow/single/MLmodel", "data/jsp_multipolicy/mlflow/multi/MLmodel")


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("jsp_multipolicy", volatile=VOLATILE)
    m = out["metrics"]
    assert m["seeds"] == [0, 1] and sorted(m["per_seed"]) == ["0", "1"]
    for s in m["per_seed"].values():
        for key in ("gap10", "gapflow"):
            assert {"single", "multi", "blind", "l2d", "SPT", "MWKR", "MOPNR", "untrained_minus_best_rule"} <= set(s[key])
        assert {"single", "multi", "blind"} <= set(s["gap15"])
    assert (out["root"] / "reports/jsp_multipolicy/gaps.png").stat().st_size > 5_000
