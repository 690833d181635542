"""Downstream scores of an embedding matrix E (one row per word).

* ``retrieval_precision``: for every word, its k nearest words by cosine similarity; the share
  of them that share a topic with it (home or second topic). With overlapping topics (bridge
  words) and noisy documents this stays below its ceiling.
* ``analogy_accuracy``: a : b :: c : ?, answered by the word closest (cosine) to b - a + c among
  the scored vocabulary, excluding a, b and c (3CosAdd on unit vectors, as the official code).
* ``similarity_spearman``: Spearman correlation of cosine similarity with human ratings
  (WordSim-353, which gensim ships).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def unit_rows(E: np.ndarray) -> np.ndarray:
    E = np.asarray(E, dtype=np.float64)
    return E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-300)


def retrieval_precision(E: np.ndarray, topic: Sequence[int], topic2: Sequence[int] | None = None,
                        k: int = 10) -> float:
    """Mean over words of precision@k: the share of a word's k nearest neighbours (cosine, itself
    excluded, ties broken by word id) that share its home or second topic."""
    return float(retrieval_per_word(E, topic, topic2, k).mean())


def retrieval_per_word(E: np.ndarray, topic: Sequence[int], topic2: Sequence[int] | None = None,
                       k: int = 10) -> np.ndarray:
    """Precision@k of every word (see :func:`retrieval_precision`)."""
    E = unit_rows(E)
    V = len(E)
    if k >= V:
        raise ValueError(f"k ({k}) must be smaller than the vocabulary ({V})")
    home = np.asarray(topic)
    second = np.full(V, -1) if topic2 is None else np.asarray(topic2)
    S = E @ E.T
    np.fill_diagonal(S, -np.inf)
    nn = np.argsort(-S, axis=1, kind="stable")[:, :k]
    h, s = home[nn], second[nn]
    hi, si = home[:, None], second[:, None]
    share = (h == hi) | ((s >= 0) & (s == hi)) | ((si >= 0) & ((h == si) | (s == si)))
    return share.mean(1)


def analogy_accuracy(E: np.ndarray, questions: np.ndarray) -> float:
    """Share of questions (rows of ids a, b, c, d) answered d by 3CosAdd (a, b, c excluded)."""
    questions = np.asarray(questions, dtype=np.int64).reshape(-1, 4)
    if len(questions) == 0:
        return float("nan")
    U = unit_rows(E)
    a, b, c, d = questions.T
    scores = (U[b] - U[a] + U[c]) @ U.T
    rows = np.arange(len(questions))
    for col in (a, b, c):
        scores[rows, col] = -np.inf
    return float((scores.argmax(1) == d).mean())


def similarity_spearman(E: np.ndarray, pairs: np.ndarray, ratings: np.ndarray) -> float:
    """Spearman correlation between cosine similarities of word pairs and human ratings."""
    from scipy.stats import spearmanr

    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if len(pairs) < 3:
        return float("nan")
    U = unit_rows(E)
    cos = (U[pairs[:, 0]] * U[pairs[:, 1]]).sum(1)
    return float(spearmanr(cos, ratings).statistic)


def read_wordsim(path) -> list[tuple[str, str, float]]:
    """WordSim-353 as gensim ships it (tab-separated, '#' comments), lower-cased."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#") or not line.strip():
                continue
            a, b, r = line.rstrip("\n").split("\t")[:3]
            out.append((a.lower(), b.lower(), float(r)))
    return out
