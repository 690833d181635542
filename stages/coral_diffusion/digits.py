"""The digits data: scikit-learn's 8x8 digits (shipped with the package), split into a balanced
held-out test set and a training pool; from the pool, a long-tailed training set and the balanced
control with every class at the rarest class's count. And the real-data classifier that scores
generated samples (scikit-learn's MLPClassifier), with its hidden layer as the feature space of the
Fréchet distance."""
from __future__ import annotations

import numpy as np

from .measures import long_tail_counts


def load() -> tuple[np.ndarray, np.ndarray]:
    """All 1797 digits: images (n, 64) scaled to [-1, 1] (pixel / 8 - 1) and labels."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.data / 8.0 - 1.0).astype(np.float32), d.target.astype(np.int64)


def split(x, y, test_per_class: int, n_max: int, ratio: float, seed: int) -> dict[str, np.ndarray]:
    """``test_x/y`` (test_per_class a class, balanced), ``pool_x/y`` (the rest: the classifier's
    training data), ``lt_x/y`` (exponential profile, class c has long_tail_counts(n_max, ratio)[c])
    and ``bal_x/y`` (every class has the rarest class's count; for the tail classes a subset of
    their long-tailed images). Draws with ``seed``."""
    rng = np.random.default_rng([seed, 23])
    counts = long_tail_counts(n_max, ratio)
    n_min = min(counts)
    test, pool, lt, bal = [], [], [], []
    for c in range(10):
        idx = rng.permutation(np.flatnonzero(y == c))
        if len(idx) < test_per_class + counts[c]:
            raise ValueError(f"class {c} has {len(idx)} images; test_per_class + its long-tail count = "
                             f"{test_per_class} + {counts[c]} is more")
        test.append(idx[:test_per_class])
        rest = idx[test_per_class:]
        pool.append(rest)
        lt.append(rest[:counts[c]])
        bal.append(rest[:n_min])
    out = {}
    for name, parts in (("test", test), ("pool", pool), ("lt", lt), ("bal", bal)):
        ids = np.sort(np.concatenate(parts))
        out[f"{name}_x"], out[f"{name}_y"] = x[ids], y[ids]
    out["counts"] = np.array(counts)
    return out


def fit_classifier(x, y, hidden: int, seed: int):
    """scikit-learn MLPClassifier (one ReLU hidden layer of ``hidden`` units, adam, early stopping off)."""
    from sklearn.neural_network import MLPClassifier

    clf = MLPClassifier(hidden_layer_sizes=(hidden,), max_iter=400, random_state=seed, alpha=1e-3)
    return clf.fit(x, y)


def classifier_features(coefs: list, intercepts: list, x) -> np.ndarray:
    """The classifier's hidden-layer activations relu(x W1 + b1): the Fréchet feature space."""
    return np.maximum(np.asarray(x, dtype=np.float64) @ coefs[0] + intercepts[0], 0.0)


def classifier_predict(coefs: list, intercepts: list, x) -> np.ndarray:
    """The classifier's labels from its weights (same as MLPClassifier.predict)."""
    h = classifier_features(coefs, intercepts, x)
    return np.argmax(h @ coefs[1] + intercepts[1], axis=1)


def prepare_seed(x, y, p, seed: int) -> tuple[dict, dict, dict]:
    """One seed's data (prepare params ``p``): (its split, its classifier's weights ``w1 b1 w2 b2``,
    figures: the long-tailed counts, set sizes and the classifier's test accuracy). The split
    draws with the seed, the classifier's initialisation too."""
    d = split(x, y, p.test_per_class, p.n_max, p.ratio, seed)
    clf = fit_classifier(d["pool_x"], d["pool_y"], p.classifier_hidden, seed)
    acc = float(np.mean(classifier_predict(clf.coefs_, clf.intercepts_, d["test_x"]) == d["test_y"]))
    weights = {"w1": clf.coefs_[0], "b1": clf.intercepts_[0], "w2": clf.coefs_[1], "b2": clf.intercepts_[1]}
    counts = d["counts"].tolist()
    figures = {"lt_counts": counts, "lt_total": int(sum(counts)), "control_per_class": int(min(counts)),
               "n_test": int(len(d["test_y"])), "n_pool": int(len(d["pool_y"])), "classifier_test_accuracy": acc}
    return d, weights, figures
