"""Sample quality, measured: a digit classifier trained on the real (quantised) digits, its hidden
layer as a small feature space for a Fréchet distance, and diversity.

- Classifier: scikit-learn's MLPClassifier (one hidden ReLU layer) on pixel levels / 15. On
  class-conditional samples it gives the accuracy (predicted class = requested class) and the mean
  confidence (the top class probability).
- Fréchet distance between the Gaussians fitted to two feature sets (the FID formula, in the
  classifier's hidden-layer features): |mu1 - mu2|^2 + tr(S1 + S2 - 2 (S1 S2)^(1/2)).
- Diversity: the mean pairwise L2 distance between samples of one class (pixels / 15), averaged
  over the classes; reported beside the same figure on real test digits.
"""
from __future__ import annotations

import numpy as np


def fit_classifier(pixels, labels, hidden: int, seed: int):
    """MLPClassifier(hidden) on pixel levels 0..15 scaled to [0, 1]."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    clf = MLPClassifier(hidden_layer_sizes=(hidden,), max_iter=400, random_state=seed, alpha=1e-3)
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


def frechet(mu1, s1, mu2, s2) -> float:
    """Fréchet distance between N(mu1, s1) and N(mu2, s2)."""
    from scipy import linalg

    mu1, mu2, s1, s2 = (np.atleast_1d(np.asarray(a, float)) for a in (mu1, mu2, s1, s2))
    s1, s2 = np.atleast_2d(s1), np.atleast_2d(s2)
    if s1.shape != s2.shape or s1.shape[0] != mu1.shape[0] or mu1.shape != mu2.shape:
        raise ValueError(f"frechet: shapes differ: mu {mu1.shape} {mu2.shape}, cov {s1.shape} {s2.shape}")
    covmean = linalg.sqrtm(s1 @ s2)
    if not np.isfinite(covmean).all():                    # singular product: regularise, as FID codes do
        eps = 1e-6 * np.eye(len(s1))
        covmean = linalg.sqrtm((s1 + eps) @ (s2 + eps))
    covmean = np.real(covmean)
    diff = mu1 - mu2
    return float(diff @ diff + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean))


def frechet_features(f1, f2) -> float:
    """Fréchet distance between the Gaussians fitted to feature sets ``f1`` and ``f2`` (rows)."""
    f1, f2 = np.asarray(f1, float), np.asarray(f2, float)
    if len(f1) < 2 or len(f2) < 2:
        raise ValueError(f"frechet_features: needs at least 2 rows each, got {len(f1)}, {len(f2)}")
    return frechet(f1.mean(0), np.cov(f1, rowvar=False), f2.mean(0), np.cov(f2, rowvar=False))


def diversity(pixels, labels) -> float:
    """Mean pairwise L2 distance within each class (pixels / 15), averaged over classes."""
    from scipy.spatial.distance import pdist

    x, y = np.asarray(pixels, float) / 15.0, np.asarray(labels)
    per = [pdist(x[y == c]).mean() for c in np.unique(y) if (y == c).sum() >= 2]
    if not per:
        raise ValueError("diversity: needs at least one class with two samples")
    return float(np.mean(per))
