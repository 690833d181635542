"""hephaestus_qosd end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

# an MLflow model's MLmodel records when it was saved and a random id: not a result (smoke seeds 0, 1)
VOLATILE = tuple(f"data/hephaestus_qosd/models/seed_{s}/MLmodel" for s in (0, 1))


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("hephaestus_qosd", volatile=VOLATILE)
    m = out["metrics"]
    assert m["seeds"] == [0, 1]
    for seed in ("0", "1"):
        ms = m["per_seed"][seed]
        assert all(v == 1.0 for v in ms["feasible_fraction"].values())
        for kind in ("quadratic", "fixed_charge"):
            assert ms[kind]["milp_solved"] == ms[kind]["instances"]
            assert ms[kind]["hephaestus"]["gap_to_optimum_mean"] >= -1e-6        # never below the optimum
    assert (out["root"] / "reports/hephaestus_qosd/cost_vs_optimum.png").stat().st_size > 5_000
