"""A topic-model corpus: documents mixing a few topics, each topic a distribution over words.

V words, T topics. Every word has a home topic. With ``size_decay = 0`` the topics hold equal
shares of the vocabulary and word w's home topic is w mod T; with ``size_decay > 0`` topic t
holds a share of the words proportional to (t + 1)^-size_decay (words are still dealt to the
topics round-robin, skipping full ones), so topics differ in size and the co-occurrence
matrix's topic eigenvalues are spread apart. A share ``bridge`` of the words (chosen with the
seed) also belongs to a second topic: such a word's in-topic mass is split half and half
between its home topic and the second one (overlapping topics).

Topic t puts mass (1 - overlap) on its own words (a bridge word counts half) and ``overlap``
uniformly on all words. A document draws topic weights theta ~ Dirichlet(concentration), then
each token a topic z ~ theta and a word ~ phi_z. Co-occurrence counts use a symmetric window of
``window`` tokens.

Ground truth per word: ``topic`` (home topic) and ``topic2`` (the second topic, -1 for none);
``truth.json`` holds the topic-word matrix phi.
"""
from __future__ import annotations

import numpy as np
from pydantic import Field, model_validator

from stages.common.base import Strict

from . import GeneratedCorpus, window_counts


class TopicCorpusParams(Strict):
    name: str = Field(pattern=r"^[a-z0-9_]+$", description="folder name under data/corpora/topics/")
    vocab: int = Field(ge=8, le=100_000, description="V, words in the vocabulary")
    topics: int = Field(ge=2, le=1000, description="T, the number of topics")
    documents: int = Field(ge=10, le=10_000_000, description="documents sampled")
    doc_length: int = Field(ge=2, le=100_000, description="tokens per document")
    concentration: float = Field(gt=0, le=100, description="Dirichlet parameter of a document's topic weights")
    overlap: float = Field(ge=0, lt=1, description="share of each topic's mass spread over all words")
    window: int = Field(ge=1, le=50, description="co-occurrence window (tokens either side)")
    size_decay: float = Field(default=0.0, ge=0, le=4,
                              description="topic t holds a share of the words ∝ (t+1)^-size_decay (0 = equal)")
    bridge: float = Field(default=0.0, ge=0, le=0.9,
                          description="share of words that also belong to a second topic")
    zipf: float = Field(default=0.0, ge=0, le=3,
                        description="within a topic, its r-th word (by id) has weight ∝ (r+1)^-zipf (0 = uniform)")

    @model_validator(mode="after")
    def _sizes(self) -> "TopicCorpusParams":
        if self.vocab < self.topics:
            raise ValueError(f"vocab ({self.vocab}) must be at least topics ({self.topics})")
        if min(topic_sizes(self.vocab, self.topics, self.size_decay)) < 1:
            raise ValueError(f"size_decay {self.size_decay} leaves a topic without words "
                             f"(vocab {self.vocab}, topics {self.topics}); lower it or add words")
        return self


def topic_sizes(V: int, T: int, size_decay: float = 0.0) -> np.ndarray:
    """Words per topic: shares ∝ (t+1)^-size_decay, rounded by largest remainder (sum V)."""
    share = (np.arange(T) + 1.0) ** -size_decay
    raw = share / share.sum() * V
    n = np.floor(raw).astype(np.int64)
    n[np.argsort(-(raw - n), kind="stable")[: V - int(n.sum())]] += 1
    return n


def home_topics(V: int, T: int, size_decay: float = 0.0) -> np.ndarray:
    """Each word's home topic: dealt round-robin over the topics that still have room, so equal
    sizes give exactly w mod T."""
    left = topic_sizes(V, T, size_decay).copy()
    home = np.empty(V, dtype=np.int64)
    t = 0
    for w in range(V):
        while left[t] == 0:
            t = (t + 1) % T
        home[w] = t
        left[t] -= 1
        t = (t + 1) % T
    return home


def second_topics(home: np.ndarray, T: int, bridge: float, seed: int) -> np.ndarray:
    """A second topic (different from the home one) for round(bridge * V) seeded words; -1 elsewhere."""
    V = len(home)
    second = np.full(V, -1, dtype=np.int64)
    n = int(round(bridge * V))
    if n:
        rng = np.random.default_rng([seed, V, T, 2])
        words = np.sort(rng.choice(V, size=n, replace=False))
        second[words] = (home[words] + 1 + rng.integers(0, T - 1, size=n)) % T
    return second


def zipf_weights(home: np.ndarray, T: int, zipf: float) -> np.ndarray:
    """Each word's weight within its home topic: (r + 1)^-zipf, r = its rank among the topic's
    words by id (all ones when zipf = 0)."""
    home = np.asarray(home)
    rank = np.empty(len(home), dtype=np.int64)
    for t in range(T):
        own = np.nonzero(home == t)[0]
        rank[own] = np.arange(len(own))
    return (rank + 1.0) ** -zipf


def topic_word(V: int, T: int, overlap: float, home: np.ndarray | None = None,
               second: np.ndarray | None = None, zipf: float = 0.0) -> np.ndarray:
    """phi, shape (T, V): each row a distribution over words. Defaults: home = w mod T, no bridges,
    uniform weights within a topic."""
    home = np.arange(V) % T if home is None else np.asarray(home)
    second = np.full(V, -1) if second is None else np.asarray(second)
    phi = np.full((T, V), overlap / V)
    if zipf == 0:
        for t in range(T):
            full = (home == t) & (second < 0)
            half = ((home == t) & (second >= 0)) | (second == t)
            weight = full.sum() + 0.5 * half.sum() if half.any() else full.sum()
            phi[t, full] += (1 - overlap) / weight
            if half.any():
                phi[t, half] += 0.5 * (1 - overlap) / weight
        return phi
    b = zipf_weights(home, T, zipf)
    for t in range(T):
        full = (home == t) & (second < 0)
        half = ((home == t) & (second >= 0)) | (second == t)
        weight = b[full].sum() + 0.5 * b[half].sum()
        phi[t, full] += (1 - overlap) * b[full] / weight
        phi[t, half] += 0.5 * (1 - overlap) * b[half] / weight
    return phi


def generate(params: TopicCorpusParams, seed: int) -> GeneratedCorpus:
    V, T = params.vocab, params.topics
    if V < T:
        raise ValueError(f"topic corpus {params.name}: vocab ({V}) must be at least topics ({T})")
    rng = np.random.default_rng([seed, V, T, params.documents])
    home = home_topics(V, T, params.size_decay)
    second = second_topics(home, T, params.bridge, seed)
    phi = topic_word(V, T, params.overlap, home, second, params.zipf)
    cdf = np.cumsum(phi, axis=1)
    docs = []
    for _ in range(params.documents):
        theta = rng.dirichlet(np.full(T, params.concentration))
        z = rng.choice(T, size=params.doc_length, p=theta)
        u = rng.random(params.doc_length)
        words = np.minimum((cdf[z] < u[:, None]).sum(1), V - 1)
        docs.append(words)
    return GeneratedCorpus(
        name=params.name, kind="topics", vocab=[f"t{home[w]}w{w}" for w in range(V)],
        sentences=docs, counts=window_counts(docs, V, params.window),
        word_truth={"topic": home.tolist(), "topic2": second.tolist()},
        truth={"vocab": V, "topics": T, "documents": params.documents, "doc_length": params.doc_length,
               "concentration": params.concentration, "overlap": params.overlap,
               "window": params.window, "size_decay": params.size_decay, "bridge": params.bridge,
               "zipf": params.zipf,
               "topic_sizes": topic_sizes(V, T, params.size_decay), "seed": seed, "topic_word": phi})
