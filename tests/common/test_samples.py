"""stages.common.samples: Fréchet distance, diversity and coverage against closed forms and hand cases."""
from __future__ import annotations

import numpy as np
import pytest

from stages.common.samples import coverage, frechet_distance, frechet_from_features, mean_pairwise_distance


def test_frechet_closed_form_two_gaussians():
    # diagonal covariances: ||mu1 - mu2||^2 + sum_i (sqrt(a_i) - sqrt(b_i))^2
    mu1, mu2 = np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 0.0])
    a, b = np.array([1.0, 4.0, 0.25]), np.array([9.0, 1.0, 0.25])
    want = 1 + 0 + 4 + (1 - 3) ** 2 + (2 - 1) ** 2 + 0
    assert frechet_distance(mu1, np.diag(a), mu2, np.diag(b)) == pytest.approx(want, rel=1e-9)
    # a full covariance against itself, shifted means: only the mean term
    m = np.random.default_rng(0).standard_normal((4, 4))
    cov = m @ m.T + np.eye(4)
    assert frechet_distance(np.zeros(4), cov, np.ones(4), cov) == pytest.approx(4.0, abs=1e-6)
    # 1-D: (m1 - m2)^2 + (s1 - s2)^2, lists and scalars accepted
    assert frechet_distance([0.0], [[4.0]], [3.0], [[1.0]]) == pytest.approx(9 + 1)
    # commuting full covariances (same eigenvectors): sum over eigenvalues of (sqrt(l1) - sqrt(l2))^2
    q, _ = np.linalg.qr(m)
    c1, c2 = q @ np.diag([1.0, 4.0, 9.0, 16.0]) @ q.T, q @ np.diag([4.0, 4.0, 1.0, 1.0]) @ q.T
    assert frechet_distance(np.zeros(4), c1, np.zeros(4), c2) == pytest.approx(1 + 0 + 4 + 9, rel=1e-8)


def test_frechet_from_features_converges_to_closed_form():
    rng = np.random.default_rng(1)
    a = rng.normal([0, 0], [1, 2], size=(40_000, 2))
    b = rng.normal([1, 0], [2, 2], size=(40_000, 2))
    assert frechet_from_features(a, b) == pytest.approx(1 + 1 + 0, abs=0.08)
    assert frechet_from_features(a[:500], a[:500]) == pytest.approx(0.0, abs=1e-8)


def test_frechet_singular_covariances_stay_finite():
    # a dead feature (zero variance in both sets), as a ReLU layer gives: finite, and the live
    # coordinate's closed form
    rng = np.random.default_rng(2)
    a = np.c_[rng.normal(0, 1, 5000), np.zeros(5000)]
    b = np.c_[rng.normal(0, 2, 5000), np.zeros(5000)]
    d = frechet_from_features(a, b)
    assert np.isfinite(d) and d == pytest.approx(1.0, abs=0.1)


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="shapes differ"):
        frechet_distance(np.zeros(2), np.eye(2), np.zeros(3), np.eye(3))
    with pytest.raises(ValueError, match=">= 2 rows"):
        frechet_from_features(np.zeros((1, 2)), np.zeros((5, 2)))
    with pytest.raises(ValueError, match="k must be in"):
        coverage(np.zeros((4, 1)), np.zeros((1, 1)), 4)
    with pytest.raises(ValueError, match="needs >= 2 rows"):
        mean_pairwise_distance(np.zeros((1, 2)))


def test_mean_pairwise_distance_and_coverage_by_hand():
    x = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 4.0]])
    assert mean_pairwise_distance(x) == pytest.approx((5 + 4 + 3) / 3)
    real = np.array([[0.0], [1.0], [10.0], [11.0]])
    # k = 1 radii: 1, 1, 1, 1; a fake at 0.5 covers 0 and 1, none near 10 and 11
    assert coverage(real, np.array([[0.5]]), 1) == 0.5
    assert coverage(real, np.array([[0.5], [10.5]]), 1) == 1.0
