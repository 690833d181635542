"""MMD against closed forms and hand cases; sliced W through POT on a 1-D case with a known answer."""
from __future__ import annotations

import numpy as np
import pytest

from stages.escort_belief.metrics import median_distance, mmd, sliced_w


def test_mmd_two_point_masses_closed_form():
    # MMD^2(delta_x, delta_y) = 2 - 2 exp(-|x - y|^2 / (2 s^2))
    x, y = np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]])
    s = np.array([1.0, 5.0])
    assert np.allclose(mmd(x, y, s), np.sqrt(2 - 2 * np.exp(-25 / (2 * s ** 2))))


def test_mmd_hand_case_with_weights():
    # X = {0, 1} with weights (3/4, 1/4), Y = {0}, s = 1: k(0,1) = e^-1/2
    X, Y = np.array([[0.0], [1.0]]), np.array([[0.0]])
    k = np.exp(-0.5)
    a = np.array([0.75, 0.25])
    want = a @ np.array([[1, k], [k, 1]]) @ a + 1 - 2 * (0.75 + 0.25 * k)
    assert np.isclose(mmd(X, Y, [1.0], a)[0], np.sqrt(want))


def test_mmd_gaussians_closed_form():
    # two 1-D Gaussians N(0,1), N(mu,1) with kernel width s: E k = s / sqrt(s^2 + 2) exp(-mu^2 / (2 (s^2 + 2)))
    rng = np.random.default_rng(0)
    mu, s, n = 1.0, 1.0, 1500
    X, Y = rng.standard_normal((n, 1)), mu + rng.standard_normal((n, 1))
    c = s / np.sqrt(s ** 2 + 2)
    want = np.sqrt(2 * c - 2 * c * np.exp(-mu ** 2 / (2 * (s ** 2 + 2))))
    assert abs(mmd(X, Y, [s])[0] - want) < 0.04


def test_mmd_identical_sets_zero_and_bad_input():
    X = np.random.default_rng(1).standard_normal((20, 3))
    assert np.allclose(mmd(X, X, [0.5, 1, 2]), 0, atol=1e-6)
    with pytest.raises(ValueError, match="same d"):
        mmd(X, X[:, :2], [1.0])
    with pytest.raises(ValueError, match="bandwidths must be > 0"):
        mmd(X, X, [0.0])


def test_median_distance_hand_case():
    assert median_distance(np.array([[0.0], [1.0], [3.0]])) == 2.0


def test_sliced_w_1d_shift_is_the_shift():
    # in 1-D every projection is +-1: SW_2 between a set and its shift by c is |c|
    X = np.random.default_rng(2).standard_normal((200, 1))
    assert np.isclose(sliced_w(X, X + 0.7, 10, seed=0), 0.7, atol=1e-9)


def test_ratio_interval_is_scipy_bca_on_paired_replications():
    """ratio_interval is stages.common.inference.bootstrap_interval with the ratio of means, paired:
    the same interval as scipy.stats.bootstrap (BCa, paired=True) with the same generator."""
    from scipy import stats

    from stages.escort_belief.metrics import ratio_interval, ratio_of_means

    rng = np.random.default_rng(5)
    den = rng.uniform(0.3, 1.0, 20)
    num = 0.6 * den + rng.normal(0, 0.08, 20).clip(-0.25, 0.25)
    r = ratio_interval(num, den, 0.95, 2000, seed=7)
    want = stats.bootstrap((num, den), ratio_of_means, confidence_level=0.95, method="BCa", paired=True,
                           vectorized=True, n_resamples=2000, random_state=np.random.default_rng(7))
    assert r["ratio"] == pytest.approx(num.mean() / den.mean()) and r["n"] == 20 and r["n_boot"] == 2000
    ci = want.confidence_interval
    assert r["low"] == pytest.approx(ci.low) and r["high"] == pytest.approx(ci.high)
    assert r["low"] < r["ratio"] < r["high"]


def test_ratio_interval_resamples_pairs_jointly():
    # num = 0.4 x den on every replication: every paired resample has ratio 0.4 (an unpaired one would
    # not), so the interval collapses onto the ratio
    from stages.escort_belief.metrics import ratio_interval

    den = np.random.default_rng(3).uniform(0.2, 1.0, 25)
    r = ratio_interval(0.4 * den, den, 0.9, 1000, seed=1)
    assert np.isclose(r["ratio"], 0.4) and np.isclose(r["low"], 0.4) and np.isclose(r["high"], 0.4)


def test_ratio_interval_bad_input():
    from stages.escort_belief.metrics import ratio_interval

    with pytest.raises(ValueError, match="one length >= 2"):
        ratio_interval([1.0, 2.0], [1.0], 0.95, 100, 0)
    with pytest.raises(ValueError, match="denominator's > 0"):
        ratio_interval([1.0, 2.0], [1.0, 0.0], 0.95, 100, 0)
    with pytest.raises(ValueError, match="0 < level < 1"):
        ratio_interval([1.0, 2.0], [1.0, 1.0], 1.5, 100, 0)


def test_belief_context_ess_and_median_by_hand():
    # uniform weights: ESS = n; one-hot weights: ESS = 1; exact samples {0, 1, 3}: median distance 2
    from stages.escort_belief.evaluate import belief_context

    n = 4
    W = np.zeros((2, 1, n))
    W[0, 0] = 1.0 / n
    W[1, 0, 2] = 1.0
    ex = np.array([[[[0.0], [1.0], [3.0]]], [[[0.0], [2.0], [6.0]]]])     # (reps, T, m, d)
    out = belief_context({"s7/d1/exact": ex}, {"s7/d1/pf_w": W}, [1], 7)
    assert np.isclose(out["pf_ess_final"]["d1"], (n + 1) / 2)
    assert np.isclose(out["exact_median_distance_final"]["d1"], (2.0 + 4.0) / 2)
