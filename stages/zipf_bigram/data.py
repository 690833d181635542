"""Data of the zipf_bigram study: synthetic Zipf bigram corpora and a real-text bigram table.

* ``stats``: per (alpha, d) the exact corpus statistics the paper's model assumes:
  input-token frequencies pi_k ∝ k^-alpha, conditional frequencies q_k ∝ k^-alpha, and
  the seed of the per-row permutations sigma_i (P[i, sigma_i(k)] = q_k).
* ``pairs``: token pairs (x, y) sampled from that model, a corpus to look at and to check
  the generator (the fitted rank-frequency exponents should come back as alpha).
* ``realtext``: bigram counts of gensim's ``lee_background.cor`` (real English, ~60k words)
  restricted to its most frequent words.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from .model import power_law


def perm_seed(seed: int, alpha: float, log2_d: int) -> int:
    return int(seed) * 1_000_003 + int(round(alpha * 1000)) * 101 + int(log2_d)


def sample_pairs(pi: np.ndarray, q: np.ndarray, n: int, seed: int, permutation_seed: int):
    """n pairs from the model: x ~ pi, k ~ q, y = sigma_x(k). Returns (x, y, k)."""
    import torch

    d = len(pi)
    g = torch.Generator().manual_seed(int(permutation_seed))
    perms = torch.argsort(torch.rand(d, d, generator=g), dim=1).numpy()  # same as torch_model
    rng = np.random.default_rng(seed)
    x = rng.choice(d, size=n, p=pi)
    k = rng.choice(d, size=n, p=q)
    return x.astype(np.int32), perms[x, k].astype(np.int32), k.astype(np.int32)


def fitted_exponent(samples: np.ndarray, min_count: int = 20) -> float:
    """Exponent a of a rank-frequency law count_r ∝ r^-a, fitted on ranks with >= min_count hits."""
    counts = np.sort(np.bincount(samples))[::-1]
    counts = counts[counts >= min_count]
    if len(counts) < 3:
        return float("nan")
    ranks = np.arange(1, len(counts) + 1)
    return float(-np.polyfit(np.log(ranks), np.log(counts), 1)[0])


def lee_corpus_path() -> Path:
    from gensim.test.utils import datapath

    path = Path(datapath("lee_background.cor"))
    if not path.exists():  # pragma: no cover - gensim ships it
        raise FileNotFoundError(f"{path}: gensim's test corpus is missing; reinstall gensim")
    return path


def realtext_bigrams(path: Path, vocab_size: int):
    """(vocab, counts) with vocab the most frequent words (ties alphabetical) and counts a
    Counter of (i, j) bigrams inside each document with both words in vocab."""
    from gensim.utils import simple_preprocess

    docs = [simple_preprocess(line) for line in path.read_text(encoding="utf-8").splitlines()]
    freq = Counter(w for doc in docs for w in doc)
    vocab = [w for w, _ in sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))[:vocab_size]]
    index = {w: i for i, w in enumerate(vocab)}
    counts: Counter = Counter()
    for doc in docs:
        ids = [index.get(w, -1) for w in doc]
        for a, b in zip(ids, ids[1:]):
            if a >= 0 and b >= 0:
                counts[(a, b)] += 1
    return vocab, [freq[w] for w in vocab], counts, sum(len(d) for d in docs)


def exact_spectra(alphas, log2_ds):
    for alpha in alphas:
        for k in log2_ds:
            pi = power_law(2 ** k, alpha)
            yield alpha, k, pi, pi.copy()
