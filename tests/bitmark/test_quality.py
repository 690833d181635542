"""bitmark's quality measures: diversity and the classifier on real digits (the Fréchet distance is
stages.common.samples: tests/common/test_samples.py)."""
from __future__ import annotations

import numpy as np
import pytest

from stages.bitmark import quality


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
