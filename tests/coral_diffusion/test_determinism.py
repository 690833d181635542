"""coral_diffusion end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = ("data/coral_diffusion/model_ddpm/MLmodel", "data/coral_diffusion/model_coral/MLmodel")


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("coral_diffusion", volatile=VOLATILE)
    m = out["metrics"]
    for name in ("lt", "bal"):
        for method in ("ddpm", "coral"):
            s = m[name][method]
            assert 0 <= s["overlap"] <= 1 and 0 <= s["tail_accuracy"] <= 1 and s["tail_frechet"] >= 0
        assert m[name]["overlap_drop"] == pytest.approx(m[name]["ddpm"]["overlap"] - m[name]["coral"]["overlap"])
    assert (out["root"] / "reports/coral_diffusion/samples.png").stat().st_size > 5_000
    assert (out["root"] / "reports/coral_diffusion/tail_vs_coral.png").stat().st_size > 5_000
