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
    assert sorted(m["per_seed"]) == ["0", "1"]              # the smoke profile's verdict seeds
    for seed in m["per_seed"].values():
        for name, arms in (("lt", ("ddpm", "coral", "shuffled")), ("bal", ("ddpm", "coral"))):
            for method in arms:
                s = seed[name][method]
                assert 0 <= s["overlap"] <= 1 and 0 <= s["tail_accuracy"] <= 1 and s["tail_frechet"] >= 0
            assert seed[name]["overlap_drop"] == seed[name]["ddpm"]["overlap"] - seed[name]["coral"]["overlap"]
        assert seed["lt"]["shuffled_tail_accuracy_gain"] == (seed["lt"]["shuffled"]["tail_accuracy"]
                                                              - seed["lt"]["ddpm"]["tail_accuracy"])
    assert (out["root"] / "reports/coral_diffusion/samples.png").stat().st_size > 5_000
    assert (out["root"] / "reports/coral_diffusion/tail_vs_coral.png").stat().st_size > 5_000
