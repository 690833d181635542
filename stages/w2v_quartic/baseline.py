"""The baseline: gensim's Word2Vec (skip-gram, negative sampling, subsampling of frequent
words, negatives from unigram^0.75) trained on the corpus's own tokens: a token file (a corpus
folder's ``tokens.txt.gz``) or the documents in memory (a verdict seed's own topic corpus)."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np


def gensim_embeddings(tokens: str | Path | list, vocab: list[str], dim: int, window: int, seed: int,
                      p) -> tuple[np.ndarray, float]:
    """Train Word2Vec (one worker thread: deterministic for a seed) on ``tokens`` (a token file's
    path, or a list of documents as token lists) and return its input vectors in the order of
    ``vocab`` (zeros for a word gensim did not keep) and the seconds it took."""
    from gensim.models import Word2Vec
    from gensim.models.word2vec import LineSentence

    sentences = LineSentence(str(tokens)) if isinstance(tokens, (str, Path)) else tokens
    t0 = time.perf_counter()
    model = Word2Vec(sentences, vector_size=dim, window=window, min_count=1,
                     sg=1, hs=0, negative=p.negative, ns_exponent=p.ns_exponent, sample=p.sample,
                     alpha=p.alpha, epochs=p.epochs, seed=seed, workers=1)
    seconds = time.perf_counter() - t0
    E = np.zeros((len(vocab), dim), dtype=np.float64)
    for i, w in enumerate(vocab):
        if w in model.wv.key_to_index:
            E[i] = model.wv[w]
    return E, seconds
