"""cdc_gs end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there for every verdict seed."""
from __future__ import annotations

import pytest

# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = ("data/cdc_gs/model/MLmodel",)


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("cdc_gs", volatile=VOLATILE)
    m = out["metrics"]
    assert m["n_images"] == 2 and m["seeds"] == [0, 1] and set(m["per_seed"]) == {"0", "1"}
    for s in ("0", "1"):
        assert set(m["per_seed"][s]["mean_psnr"]) == {"adc", "loss_map", "cdc", "cdc_shuffled"}
        assert set(m["per_seed"][s]["per_image"]) == {"camera", "brick"}
    assert m["per_seed"]["0"]["mean_psnr"]["cdc"] != m["per_seed"]["1"]["mean_psnr"]["cdc"]
    assert (out["root"] / "reports/cdc_gs/grid.png").stat().st_size > 5_000
