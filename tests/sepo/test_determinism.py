"""sepo end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest


# the MLflow model folders carry their creation time in MLmodel
VOLATILE = ("data/sepo/pretrained/MLmodel", "data/sepo/sepo_model/MLmodel")


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("sepo", volatile=VOLATILE)
    m = out["metrics"]
    assert m["pretrained"]["exact_sum"] == pytest.approx(1.0, abs=1e-6)
    for arm in ("released", "released_control", "variant"):
        assert {"gain", "relative_gain", "matched_kl"} <= set(m[arm])
    # no method beats the KL-optimal tilt, on any seed
    assert all(f["max_above_tilt_frontier"] <= 1e-6 for f in m["per_seed"].values())
    assert (out["root"] / "reports/sepo/reward_vs_kl.png").stat().st_size > 5_000
