"""The claims' differences, on a table worked by hand."""
from __future__ import annotations

import pytest

from stages.dyna_rend.evaluate import comparisons


def row(i, p):
    return {"none": i, "distractors": p, "table": p, "lighting": p}


def test_comparisons_by_hand():
    succ = {"none": row(0.3, 0.2), "mae2d": row(0.35, 0.2), "vidpred2d": row(0.5, 0.3),
            "recon3d": row(0.4, 0.3), "dynarend": row(0.45, 0.35), "dynarend_blind": row(0.9, 0.9)}
    out, pert = comparisons(succ)
    assert out["transfer_gain"] == pytest.approx(0.2) and out["transfer_gain_arm"] == "vidpred2d"   # the control is no arm
    assert out["dynarend_minus_best2d"] == pytest.approx(-0.05)
    assert out["dynarend_minus_none"] == pytest.approx(0.15)
    assert out["dynarend_minus_vidpred2d"] == pytest.approx(-0.05)
    assert out["dynarend_minus_recon3d"] == pytest.approx(0.05)
    assert out["perturbed_dynarend_minus_none"] == pytest.approx(0.15) and pert["none"] == pytest.approx(0.2)


def test_missing_arm_gives_none():
    out, _ = comparisons({"none": row(0.3, 0.2), "dynarend": row(0.4, 0.3)})
    assert out["dynarend_minus_mae2d"] is None and out["transfer_gain"] == pytest.approx(0.1)
    assert out["dynarend_minus_best2d"] is None
