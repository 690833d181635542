"""The paired comparison the claims check, against scipy's paired t test and a case by hand."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from stages.rl_vla.evaluate import METHODS, SPLITS, paired, summarise


def test_paired_interval_is_scipys_paired_t_interval():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    out = paired(a, b, 0.95)
    ci = stats.ttest_rel(a, b).confidence_interval(0.95)
    assert out["mean"] == pytest.approx((a - b).mean())
    assert (out["low"], out["high"]) == pytest.approx((ci.low, ci.high))


def test_summarise_by_hand():
    ones, zeros = np.ones(4, int), np.zeros(4, int)
    half = np.array([1, 1, 0, 0])
    success = {m: {s: half for s in SPLITS} for m in METHODS}
    success["ppo"] = {s: ones for s in SPLITS}
    success["sft"] = {**{s: half for s in SPLITS}, "semantic": zeros}
    out = summarise(success, 0.95)
    assert out["ppo_minus_sft"]["semantic"]["mean"] == 1.0      # every paired episode: 1 - 0
    assert out["ppo_minus_sft"]["execution"]["mean"] == 0.5
    assert out["success"]["ppo"]["visual_over_train"] == 1.0
    assert out["success"]["sft"]["mean_ood"] == pytest.approx((0.5 + 0.0 + 0.5) / 3)
