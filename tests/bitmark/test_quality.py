"""bitmark's quality measures: the Fréchet distance against the closed form for two Gaussians,
diversity and the classifier on real digits."""
from __future__ import annotations

import numpy as np
import pytest

from stages.bitmark import quality


def test_frechet_one_dimensional_closed_form():
    # (m1 - m2)^2 + s1 + s2 - 2 sqrt(s1 s2) = (m1 - m2)^2 + (sd1 - sd2)^2
    assert quality.frechet([1.0], [[4.0]], [3.0], [[9.0]]) == pytest.approx(4 + 1)


def test_frechet_commuting_covariances_closed_form():
    mu1, mu2 = np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 0.0])
    d1, d2 = np.array([1.0, 2.0, 3.0]), np.array([4.0, 0.5, 3.0])
    q = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))[0]      # a shared rotation
    s1, s2 = q @ np.diag(d1) @ q.T, q @ np.diag(d2) @ q.T
    want = np.sum((mu1 - mu2) ** 2) + np.sum((np.sqrt(d1) - np.sqrt(d2)) ** 2)
    assert quality.frechet(mu1, s1, mu2, s2) == pytest.approx(want, rel=1e-8)
    assert quality.frechet(mu1, s1, mu1, s1) == pytest.approx(0.0, abs=1e-8)


def test_frechet_of_samples_approaches_the_gaussians_value():
    rng = np.random.default_rng(1)
    a = rng.normal([0, 0], [1, 2], size=(40000, 2))
    b = rng.normal([1, 0], [2, 2], size=(40000, 2))
    assert quality.frechet_features(a, b) == pytest.approx(1 + 1, abs=0.06)


def test_frechet_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="shapes differ"):
        quality.frechet([0, 0], np.eye(2), [0, 0, 0], np.eye(3))
    with pytest.raises(ValueError, match="at least 2 rows"):
        quality.frechet_features(np.zeros((1, 2)), np.zeros((5, 2)))


def test_diversity_by_hand():
    px = np.array([[0] * 64, [15] * 64, [0] * 64, [0] * 64])
    assert quality.diversity(px, [0, 0, 1, 1]) == pytest.approx((8.0 + 0.0) / 2)   # |1 .. 1| over 64 pixels = 8


def test_classifier_reads_real_digits():
    from sklearn.datasets import load_digits

    from stages.bitmark.wm import quantise

    d = load_digits()
    q = quantise(d.data)
    clf = quality.fit_classifier(q[:1200], d.target[:1200], 16, 0)
    c = quality.classify(clf, q[1200:], d.target[1200:])
    assert c["accuracy"] > 0.85 and 0 < c["confidence"] <= 1
    assert quality.features(clf, q[:5]).shape == (5, 16)
