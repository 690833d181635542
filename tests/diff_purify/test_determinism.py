"""diff_purify end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = ("data/diff_purify/model/MLmodel",)


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("diff_purify", volatile=VOLATILE)
    m = out["metrics"]
    for key in ("aaopt_minus_prior", "prior_minus_none", "aaopt_minus_aaopt_noise"):
        assert -1 <= m["main"]["bpda_eot"][key]["mean"] <= 1
    assert -100 <= m["max_clean_drop_points"] <= 100
    assert set(m["clean"]) == {"none", "noise_only", "prior", "aaopt", "aaopt_noise"}
    assert m["seeds"] == [0, 1] and sorted(m["per_seed"]) == ["0", "1"]       # the smoke profile's verdict seeds
    assert (out["root"] / "reports/diff_purify/robust_accuracy.png").stat().st_size > 5_000
    assert (out["root"] / "reports/diff_purify/grid.png").stat().st_size > 5_000
