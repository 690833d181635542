"""coral_diffusion measures against closed forms and cases worked by hand; their bad inputs."""
from __future__ import annotations

import numpy as np
import pytest

from stages.coral_diffusion.measures import (bhattacharyya_1d, coverage, frechet_distance, frechet_from_samples,
                                             knn_overlap, long_tail_counts, mean_pairwise_distance, pair_overlap)


def test_long_tail_counts_exponential_profile():
    c = long_tail_counts(140, 20.0)
    assert c[0] == 140 and c[-1] == 7 and all(a > b for a, b in zip(c, c[1:]))
    assert c[3] == round(140 * 20 ** (-3 / 9))
    assert long_tail_counts(30, 1.0) == [30] * 10
    with pytest.raises(ValueError, match="ratio >= 1"):
        long_tail_counts(10, 0.5)


def test_knn_overlap_by_hand():
    # 1-D points: tail class 9 at 0 and 10; head class 0 at 1 and 11; class 5 at 2.
    feats = np.array([[0.0], [10.0], [1.0], [11.0], [2.0]])
    labels = np.array([9, 9, 0, 0, 5])
    # k = 1: the point at 0 -> 1 (head), the point at 10 -> 11 (head): overlap 1
    assert knn_overlap(feats, labels, [9], [0], 1) == 1.0
    # k = 2: 0 -> {1 (head), 2 (class 5)}; 10 -> {11 (head), 2?} no: distances from 10 are 1 (11), 8 (2), 9 (1), 10 (0)
    #        -> {11 (head), 2 (class 5)}: each 1/2 head, overlap 0.5
    assert knn_overlap(feats, labels, [9], [0], 2) == 0.5
    # separated clusters: no head neighbour
    feats2 = np.array([[0.0], [0.1], [5.0], [5.1]])
    assert knn_overlap(feats2, np.array([9, 9, 0, 0]), [9], [0], 1) == 0.0


def test_knn_overlap_bad_inputs():
    f, y = np.zeros((4, 2)), np.array([9, 9, 0, 0])
    with pytest.raises(ValueError, match="k must be in 1..n-1"):
        knn_overlap(f, y, [9], [0], 4)
    with pytest.raises(ValueError, match="share classes"):
        knn_overlap(f, y, [9], [9, 0], 1)
    with pytest.raises(ValueError, match="no point has a tail label"):
        knn_overlap(f, y, [7], [0], 1)
    with pytest.raises(ValueError, match="feats must be"):
        knn_overlap(np.zeros((3, 2)), y, [9], [0], 1)


def test_frechet_closed_form_two_gaussians():
    # diagonal covariances: ||mu1 - mu2||^2 + sum_i (sqrt(a_i) - sqrt(b_i))^2
    mu1, mu2 = np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 0.0])
    a, b = np.array([1.0, 4.0, 0.25]), np.array([9.0, 1.0, 0.25])
    want = 1 + 0 + 4 + (1 - 3) ** 2 + (2 - 1) ** 2 + 0
    assert frechet_distance(mu1, np.diag(a), mu2, np.diag(b)) == pytest.approx(want, rel=1e-9)
    # a full covariance against itself, rotated means: only the mean term
    rng = np.random.default_rng(0)
    m = rng.standard_normal((4, 4))
    cov = m @ m.T + np.eye(4)
    assert frechet_distance(np.zeros(4), cov, np.ones(4), cov) == pytest.approx(4.0, abs=1e-6)
    # 1-D: (m1 - m2)^2 + (s1 - s2)^2
    assert frechet_distance([0.0], [[4.0]], [3.0], [[1.0]]) == pytest.approx(9 + 1)


def test_frechet_from_samples_converges_to_closed_form():
    rng = np.random.default_rng(1)
    a = rng.normal([0, 0], [1, 2], size=(40_000, 2))
    b = rng.normal([1, 0], [2, 2], size=(40_000, 2))
    assert frechet_from_samples(a, b) == pytest.approx(1 + 1 + 0, abs=0.08)


def test_frechet_bad_inputs():
    with pytest.raises(ValueError, match="shapes differ"):
        frechet_distance(np.zeros(2), np.eye(2), np.zeros(3), np.eye(3))
    with pytest.raises(ValueError, match="need >= 2 rows"):
        frechet_from_samples(np.zeros((1, 2)), np.zeros((5, 2)))


def test_bhattacharyya_closed_form():
    assert bhattacharyya_1d(0, 1, 0, 1) == pytest.approx(1.0)
    # equal variances: exp(-(m1 - m2)^2 / (8 v))
    assert bhattacharyya_1d(0, 1, 2, 1) == pytest.approx(np.exp(-4 / 8))
    with pytest.raises(ValueError, match="variances must be > 0"):
        bhattacharyya_1d(0, 0, 1, 1)


def test_pair_overlap_identical_and_separated():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((400, 3))
    y = np.repeat([9, 0], 200)
    assert pair_overlap(x, y, [9], [0]) > 0.97
    x[y == 0] += 20.0
    assert pair_overlap(x, y, [9], [0]) < 1e-6


def test_mean_pairwise_distance_and_coverage_by_hand():
    x = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 4.0]])
    assert mean_pairwise_distance(x) == pytest.approx((5 + 4 + 3) / 3)
    real = np.array([[0.0], [1.0], [10.0], [11.0]])
    # k = 1 radii: 1, 1, 1, 1; a fake at 0.5 covers 0 and 1, none near 10/11
    assert coverage(real, np.array([[0.5]]), 1) == 0.5
    assert coverage(real, np.array([[0.5], [10.5]]), 1) == 1.0
    with pytest.raises(ValueError, match="k must be in"):
        coverage(real, real, 4)
    with pytest.raises(ValueError, match="need >= 2 rows"):
        mean_pairwise_distance(x[:1])
