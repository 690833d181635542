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
