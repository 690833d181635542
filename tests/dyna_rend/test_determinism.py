"""dyna_rend end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

from tests.helpers import assert_claims_read_every_seed

# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = ("data/dyna_rend/model/MLmodel",)


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("dyna_rend", volatile=VOLATILE)
    m = out["metrics"]
    assert set(m["success"]) == {"none", "mae2d", "vidpred2d", "recon3d", "dynarend", "dynarend_blind"}
    assert set(m["per_seed"]) == {"0", "1"}
    assert all(0 <= v <= 1 for f in m["per_seed"].values() for s in f["success"].values() for v in s.values())
    assert_claims_read_every_seed("dyna_rend", m, [0, 1])
    assert (out["root"] / "reports/dyna_rend/success.png").stat().st_size > 5_000
