"""Sample quality, measured: a digit classifier trained on the real (quantised) digits, its hidden
layer as a small feature space for a Fréchet distance, and diversity.

- Classifier: scikit-learn's MLPClassifier (one hidden ReLU layer) on pixel levels / 15. On
  class-conditional samples it gives the accuracy (predicted class = requested class) and the mean
  confidence (the top class probability).
- Fréchet distance between the Gaussians fitted to two feature sets (the FID formula, in the
  classifier's hidden-layer features): ``stages.common.samples.frechet_from_features``.
- Diversity: the mean pairwise L2 distance between samples of one class (pixels / 15), averaged
  over the classes; reported beside the same figure on real test digits.
"""
from __future__ import annotations

import numpy as np


def fit_classifier(pixels, labels, hidden: int, seed: int, max_iter: int = 400):
    """MLPClassifier(hidden) on pixel levels 0..15 scaled to [0, 1], ``max_iter`` epochs of Adam."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    clf = MLPClassifier(hidden_layer_sizes=(hidden,), max_iter=max_iter, random_state=seed, alpha=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(np.asarray(pixels, float) / 15.0, np.asarray(labels))
    return clf


def features(clf, pixels) -> np.ndarray:
    """The classifier's hidden ReLU activations of ``pixels`` (levels 0..15)."""
    x = np.asarray(pixels, float) / 15.0
    return np.maximum(x @ clf.coefs_[0] + clf.intercepts_[0], 0.0)


def classify(clf, pixels, labels) -> dict:
    """Accuracy against the requested ``labels`` and mean top-class confidence."""
    prob = clf.predict_proba(np.asarray(pixels, float) / 15.0)
    pred = clf.classes_[prob.argmax(1)]
    return {"accuracy": float(np.mean(pred == np.asarray(labels))), "confidence": float(prob.max(1).mean())}


def diversity(pixels, labels) -> float:
    """Mean pairwise L2 distance within each class (pixels / 15), averaged over classes."""
    from stages.common.samples import mean_pairwise_distance

    x, y = np.asarray(pixels, float) / 15.0, np.asarray(labels)
    per = [mean_pairwise_distance(x[y == c]) for c in np.unique(y) if (y == c).sum() >= 2]
    if not per:
        raise ValueError("diversity: needs at least one class with two samples")
    return float(np.mean(per))
