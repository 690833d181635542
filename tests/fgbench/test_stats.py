"""fgbench statistics against known answers: MAE/RMSE and accuracy on tiny cases, the bootstrap
against scipy.stats.bootstrap (BCa), the percentile bootstrap it replaced and the normal closed
form, paired differences."""
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


def test_bootstrap_is_scipys_paired_bca():
    rng = np.random.default_rng(0)
    ea = rng.normal(0, 1.3, 300)
    eb = ea * rng.uniform(0.7, 1.1, 300)
    ours = stats.bootstrap([ea, eb], stats.diff_abs_stat, 2000, 0.95, seed=1)
    ref = sps.bootstrap((ea, eb), lambda a, b, axis: np.abs(a).mean(axis) - np.abs(b).mean(axis), paired=True,
                        vectorized=True, n_resamples=2000, confidence_level=0.95, method="BCa",
                        random_state=np.random.default_rng(1)).confidence_interval
    assert ours == pytest.approx((ref.low, ref.high), rel=1e-12)


def old_bootstrap(arrays, statistic, n_boot, level, seed, chunk=500):
    """The hand-written percentile bootstrap stats.py used before scipy's BCa (reference copy;
    its statistics reduced the last axis, as the ``*_stat`` functions do by default)."""
    arrays = [np.asarray(a, dtype=float) for a in arrays]
    n = len(arrays[0])
    rng = np.random.default_rng(seed)
    out = []
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        idx = rng.integers(0, n, size=(b, n))
        out.append(np.asarray(statistic(*[a[idx] for a in arrays]), dtype=float))
    s = np.concatenate(out)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(s, [alpha, 1 - alpha])
    return (float(lo), float(hi)), s


def test_bootstrap_agrees_with_the_old_percentile_bootstrap():
    """The evaluate stage's shapes (default profile): a model's hits on 116 single-FG questions
    (accuracy about 0.82, the claim single_increase_above_chance), errors on 94 value questions
    (MAE, RMSE) and paired errors of two models on 380 molecules (the MAE difference). scipy's
    percentile interval draws the same resamples from the same seed, so it equals the old one;
    BCa moves each end by its bias and skew correction (z0 + a z^2 in normal units), on these
    shapes up to about 0.65 sd of the bootstrap distribution (the RMSE's square makes it the
    most skewed), so BCa is held to 0.75 sd of the old one."""
    rng = np.random.default_rng(11)
    hits = (rng.random(116) < 0.82).astype(float)
    e = rng.normal(0, 0.9, 94)
    ea = rng.normal(0, 1.3, 380)
    eb = ea * rng.uniform(0.7, 1.1, 380)
    for arrays, stat in (([hits], stats.mean_stat), ([np.abs(e)], stats.mean_stat), ([e], stats.rmse_stat),
                         ([ea, eb], stats.diff_abs_stat)):
        old, draws = old_bootstrap(arrays, stat, 2000, 0.95, seed=5)
        assert stats.bootstrap(arrays, stat, 2000, 0.95, seed=5, method="percentile") == pytest.approx(old, rel=1e-12)
        bca = stats.bootstrap(arrays, stat, 2000, 0.95, seed=5)
        assert bca[0] < bca[1]                                      # BCa defined: not the point
        assert np.abs(np.subtract(bca, old)).max() <= 0.75 * draws.std()


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
