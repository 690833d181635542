"""coral_diffusion measures against closed forms and cases worked by hand; their bad inputs.
(The Fréchet distance, diversity and coverage are stages.common.samples: tests/common/test_samples.py.)"""
from __future__ import annotations

import numpy as np
import pytest

from stages.coral_diffusion.measures import bhattacharyya_1d, knn_overlap, long_tail_counts, pair_overlap


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
