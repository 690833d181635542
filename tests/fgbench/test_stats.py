"""fgbench statistics against known answers: MAE/RMSE and accuracy on tiny cases, the percentile
bootstrap against scipy.stats.bootstrap and the normal closed form, paired differences."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from stages.fgbench import stats


def test_mae_rmse_accuracy_by_hand():
    assert stats.mae([1, 2, 3], [1, 4, 0]) == pytest.approx((0 + 2 + 3) / 3)
    assert stats.rmse([1, 2, 3], [1, 4, 0]) == pytest.approx(np.sqrt((0 + 4 + 9) / 3))
    assert stats.accuracy(["True", "false", "True"], ["True", "False", "False"]) == pytest.approx(2 / 3)


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="two equal, non-empty"):
        stats.mae([1, 2], [1])
    with pytest.raises(ValueError, match="two equal, non-empty"):
        stats.accuracy([], [])
    with pytest.raises(ValueError, match="level must lie in"):
        stats.bootstrap([np.ones(3)], stats.mean_stat, 100, 1.5, 0)
    with pytest.raises(ValueError, match="non-empty arrays of one length"):
        stats.bootstrap([np.ones(3), np.ones(4)], stats.diff_abs_stat, 100, 0.95, 0)


def test_bootstrap_matches_scipy_percentile():
    rng = np.random.default_rng(0)
    x = rng.exponential(size=300)
    ours = stats.bootstrap([x], stats.mean_stat, 20_000, 0.95, seed=1)
    ref = sps.bootstrap((x,), np.mean, n_resamples=20_000, confidence_level=0.95, method="percentile",
                        random_state=np.random.default_rng(2)).confidence_interval
    se = x.std() / np.sqrt(len(x))
    assert ours[0] == pytest.approx(ref.low, abs=0.03 * se * 10)
    assert ours[1] == pytest.approx(ref.high, abs=0.03 * se * 10)


def test_accuracy_interval_matches_the_normal_closed_form():
    hits = np.r_[np.ones(700), np.zeros(300)]
    out = stats.score_bool(["True"] * 1000, ["True"] * 700 + ["False"] * 300, 20_000, 0.95, seed=3)
    half = 1.959964 * np.sqrt(0.7 * 0.3 / 1000)
    assert out["accuracy"] == pytest.approx(0.7)
    assert out["ci_low"] == pytest.approx(0.7 - half, abs=0.004)
    assert out["ci_high"] == pytest.approx(0.7 + half, abs=0.004)
    assert hits.mean() == out["accuracy"]


def test_paired_difference_is_paired():
    """b = a + 0.1 everywhere: the paired MAE difference has no spread at all."""
    rng = np.random.default_rng(4)
    a = np.abs(rng.normal(size=200))
    lo, hi = stats.bootstrap([a + 0.1, a], stats.diff_abs_stat, 2000, 0.95, seed=5)
    assert lo == pytest.approx(0.1) and hi == pytest.approx(0.1)


def test_value_scores_and_same_seed_same_interval():
    p, t = np.array([0.0, 1.0, 2.0, 4.0]), np.array([0.0, 0.0, 0.0, 0.0])
    s1 = stats.score_value(p, t, 500, 0.9, seed=7)
    assert s1["mae"] == pytest.approx(7 / 4) and s1["rmse"] == pytest.approx(np.sqrt(21 / 4))
    assert s1 == stats.score_value(p, t, 500, 0.9, seed=7)
    assert s1["mae_ci_low"] <= s1["mae"] <= s1["mae_ci_high"]
