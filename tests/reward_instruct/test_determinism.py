"""reward_instruct end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, the figures the claims read are there for each verdict seed, and the
registered R0 sampler (the first verdict seed's) loads through MLflow and samples
deterministically for a seed."""
from __future__ import annotations

import pytest

# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = ("data/reward_instruct/teacher_model/MLmodel", "data/reward_instruct/r0_model/MLmodel")


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("reward_instruct", volatile=VOLATILE)
    m = out["metrics"]
    assert sorted(m["per_seed"]) == ["0", "1"]                      # the smoke profile's verdict seeds
    for s in m["per_seed"].values():
        for key in ("r0_minus_distill_logp_min", "distill_regularised_minus_distill_logp_min",
                    "r0_fd_over_teacher_max", "r0_accuracy_gain_final", "distill_accuracy_gain_final",
                    "control_fd_over_teacher_final", "r0_over_distill_fd_max", "r0_diversity_over_teacher_final"):
            assert key in s["claim"]
        assert s["teacher_ref"]["fd"] > 0 and 0 <= s["final"]["r0"]["accuracy"] <= 1
    assert m["per_seed"]["0"]["claim"] != m["per_seed"]["1"]["claim"]
    for png in ("reward_vs_fd.png", "samples.png"):
        assert (out["root"] / "reports/reward_instruct" / png).stat().st_size > 5_000
    import mlflow.pyfunc
    import pandas as pd

    model = mlflow.pyfunc.load_model(str(out["root"] / "data/reward_instruct/r0_model"))
    a = model.predict(pd.DataFrame({"class": [0, 3, 9], "seed": 5}))
    assert a == model.predict(pd.DataFrame({"class": [0, 3, 9], "seed": 5})) and len(a) == 3 and len(a[0]) == 64
    assert max(max(abs(v) for v in row) for row in a) <= 1.0
    with pytest.raises(Exception, match="classes must be in 0..9"):
        model.predict(pd.DataFrame({"class": [10], "seed": 0}))
