"""dima end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

# an MLflow model's MLmodel records when it was saved and a random id, an SB3 zip its entries' times: not results
VOLATILE = ("data/dima/model/MLmodel", "data/dima/ppo.zip")   # SB3 zips carry the save time


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("dima", volatile=VOLATILE)
    m = out["metrics"]
    for run in ("main", "control", "rich"):
        assert m[run]["seq_over_joint"]["mse_at_H"] > 0
    assert m["main"]["seq_over_joint_chain"]["mse_at_H"] > 0
    assert set(m["return"]) >= {"random", "heuristic", "mpc_true", "mpc_joint", "mpc_seq", "seq_minus_joint"}
    for name in ("rollout_mse.png", "returns.png", "episode.png", "episode.gif"):
        assert (out["root"] / "reports/dima" / name).stat().st_size > 2_000
