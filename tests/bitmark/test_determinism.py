"""bitmark end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = tuple(f"data/bitmark/{m}/MLmodel" for m in ("model_clean", "model_radioactive", "model_control"))


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("bitmark", volatile=VOLATILE)
    m = out["metrics"]
    assert 0 <= m["detection"]["auc"] <= 1 and 0 <= m["detection"]["weakest_delta_auc"] <= 1
    assert m["detection"]["z_mean"] > m["clean"]["z_mean"]                 # the bias raises the green share
    assert set(m["radioactivity"]) == {"tpr_at_fpr", "control_tpr_at_fpr", "z_mean", "control_z_mean", "gap", "threshold_z"}
    assert set(m["per_seed"]) == {"0", "1"}                                # the smoke profile's verdict seeds
    assert {"bitflip_0p1", "bitflip_0p2", "noise_1", "blur_0p5"} <= set(m["robustness"])
    assert abs(m["null"]["z_mean"]) < 0.3
    for png in ("samples.png", "robustness.png", "delta_sweep.png"):
        assert (out["root"] / "reports/bitmark" / png).stat().st_size > 5_000
