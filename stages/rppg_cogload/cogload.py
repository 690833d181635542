"""Cognitive-load classification from vital-sign features (scikit-learn): CogPhys's feature
configurations, per-participant z-scoring, and participant-disjoint cross-validation.
"""
from __future__ import annotations

import numpy as np

PPG_FEATURES = ("hr", "rmssd", "sdnn", "pnn50", "sd1", "sd2")
RESP_FEATURES = ("rr", "resp_amp")
BLINK_FEATURES = ("blink_rate",)

# configuration -> the feature columns it uses (prefix contact_ / remote_ as in the features table)
CONFIGS = {
    "contact": [f"contact_{k}" for k in PPG_FEATURES + RESP_FEATURES],
    "remote_ppg": [f"remote_{k}" for k in PPG_FEATURES],
    "remote_ppg_resp": [f"remote_{k}" for k in PPG_FEATURES + RESP_FEATURES],
    "remote_ppg_resp_blink": [f"remote_{k}" for k in PPG_FEATURES + RESP_FEATURES + BLINK_FEATURES],
    "blink_only": [f"remote_{k}" for k in BLINK_FEATURES],
}
CLASSIFIERS = ("lr", "svm", "rf")


def zscore_within(x: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each column z-scored within each group (participant), NaN ignored and then set to 0 (the
    participant's mean). Uses no labels."""
    out = np.zeros_like(x, dtype=float)
    for g in np.unique(groups):
        rows = groups == g
        block = x[rows].astype(float)
        mu = np.nanmean(np.where(np.isfinite(block), block, np.nan), axis=0)
        sd = np.nanstd(np.where(np.isfinite(block), block, np.nan), axis=0)
        mu, sd = np.nan_to_num(mu), np.where(np.isfinite(sd) & (sd > 1e-9), sd, 1.0)
        out[rows] = np.nan_to_num((block - mu) / sd, nan=0.0, posinf=0.0, neginf=0.0)
    return out


def global_standardise(x: np.ndarray) -> np.ndarray:
    """The no-personalisation ablation: NaN set to the column mean, no per-participant scaling (the
    classifiers' pipeline standardises globally)."""
    x = np.where(np.isfinite(x), x, np.nan).astype(float)
    return np.where(np.isnan(x), np.nanmean(x, axis=0), x)


def make_classifier(name: str, seed: int, rf_trees: int = 100):
    """LR, SVM-RBF or RF (sklearn), each behind a StandardScaler."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    if name == "lr":
        model = LogisticRegression(C=1.0, max_iter=2000)
    elif name == "svm":
        model = SVC(C=1.0, kernel="rbf", gamma="scale")
    elif name == "rf":
        model = RandomForestClassifier(n_estimators=rf_trees, random_state=seed, n_jobs=1)
    else:
        raise ValueError(f"unknown classifier {name!r}; allowed: {', '.join(CLASSIFIERS)}")
    return make_pipeline(StandardScaler(), model)


def cv_accuracy(x: np.ndarray, y: np.ndarray, groups: np.ndarray, classifier: str, folds: int, seed: int,
                rf_trees: int = 100) -> float:
    """Accuracy of out-of-fold predictions under GroupKFold(``folds``) by participant (no participant in
    both the training and the test part of a fold)."""
    from sklearn.model_selection import GroupKFold

    pred = np.empty_like(y)
    for tr, te in GroupKFold(n_splits=folds).split(x, y, groups):
        pred[te] = make_classifier(classifier, seed, rf_trees).fit(x[tr], y[tr]).predict(x[te])
    return float(np.mean(pred == y))


def permute_within(values: np.ndarray, groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``values`` shuffled among the rows of each group (participant)."""
    out = values.copy()
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        out[idx] = values[rng.permutation(idx)]
    return out
