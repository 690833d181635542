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


def test_paired_ratio_ci_hand_case():
    # two replications: num (1, 3), den (2, 2); the resamples give mean ratios 1/2, 2/2 or 3/2 with
    # probabilities 1/4, 1/2, 1/4, so the 95% percentile interval is [0.5, 1.5] and the ratio 1
    from stages.escort_belief.metrics import paired_ratio_ci

    r = paired_ratio_ci([1.0, 3.0], [2.0, 2.0], 4000, 0.95, np.random.default_rng(0))
    assert r["ratio"] == 1.0 and r["low"] == 0.5 and r["high"] == 1.5 and r["n"] == 2


def test_paired_ratio_ci_resamples_pairs_jointly():
    # num = 0.4 x den on every replication: every paired resample has ratio 0.4 (an unpaired one would not)
    from stages.escort_belief.metrics import paired_ratio_ci

    den = np.random.default_rng(3).uniform(0.2, 1.0, 25)
    r = paired_ratio_ci(0.4 * den, den, 1000, 0.9, np.random.default_rng(1))
    assert np.isclose(r["ratio"], 0.4) and np.isclose(r["low"], 0.4) and np.isclose(r["high"], 0.4)


def test_paired_ratio_ci_bad_input():
    from stages.escort_belief.metrics import paired_ratio_ci

    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="one length >= 2"):
        paired_ratio_ci([1.0, 2.0], [1.0], 100, 0.95, rng)
    with pytest.raises(ValueError, match="denominator's > 0"):
        paired_ratio_ci([1.0, 2.0], [1.0, 0.0], 100, 0.95, rng)
    with pytest.raises(ValueError, match="0 < level < 1"):
        paired_ratio_ci([1.0, 2.0], [1.0, 1.0], 100, 1.5, rng)


def test_belief_context_ess_and_median_by_hand():
    # uniform weights: ESS = n; one-hot weights: ESS = 1; exact samples {0, 1, 3}: median distance 2
    from stages.escort_belief.evaluate import belief_context

    n = 4
    W = np.zeros((2, 1, n))
    W[0, 0] = 1.0 / n
    W[1, 0, 2] = 1.0
    ex = np.array([[[[0.0], [1.0], [3.0]]], [[[0.0], [2.0], [6.0]]]])     # (reps, T, m, d)
    out = belief_context({"d1/exact": ex}, {"d1/pf_w": W}, [1])
    assert np.isclose(out["pf_ess_final"]["d1"], (n + 1) / 2)
    assert np.isclose(out["exact_median_distance_final"]["d1"], (2.0 + 4.0) / 2)
