"""rppg_cogload end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("rppg_cogload", volatile=("data/rppg_cogload/model/MLmodel",))
    c = out["metrics"]["claim"]
    for key in ("fusion_over_best_camera", "remote_minus_contact_pp", "blink_adds_pp", "contact_accuracy",
                "control_shared_noise_fusion_over_best", "control_high_motion_remote_minus_contact_pp"):
        assert c[key] == c[key], key                  # measured (not NaN) on smoke
    assert (out["root"] / "reports/rppg_cogload/hr_mae.png").stat().st_size > 5_000
