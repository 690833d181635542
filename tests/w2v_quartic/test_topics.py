"""The topic-corpus generator's extensions used by w2v_quartic (unequal topic sizes, bridge
words, Zipfian words), and that its original behaviour is unchanged when they are off."""
from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from stages.common.corpora import topics as tp


def _params(**kw) -> tp.TopicCorpusParams:
    base = dict(name="t", vocab=40, topics=4, documents=30, doc_length=12, concentration=0.5,
                overlap=0.2, window=2)
    return tp.TopicCorpusParams(**{**base, **kw})


def test_defaults_keep_the_original_model():
    """size_decay = bridge = zipf = 0: home topic w mod T and the original phi, bit for bit."""
    V, T, o = 40, 4, 0.2
    home = np.arange(V) % T
    legacy = np.full((T, V), o / V)
    for t in range(T):
        own = home == t
        legacy[t, own] += (1 - o) / own.sum()
    assert np.array_equal(tp.topic_word(V, T, o), legacy)
    assert np.array_equal(tp.home_topics(V, T), home)
    c = tp.generate(_params(), seed=0)
    assert c.word_truth["topic"] == home.tolist() and c.word_truth["topic2"] == [-1] * V
    assert c.vocab[5] == "t1w5"


def test_topic_sizes_and_round_robin():
    n = tp.topic_sizes(400, 9, 1.0)
    assert n.sum() == 400 and (np.diff(n) <= 0).all() and n[0] == 141
    home = tp.home_topics(400, 9, 1.0)
    assert np.bincount(home, minlength=9).tolist() == n.tolist()
    assert home[:9].tolist() == list(range(9))        # dealt round-robin while every topic has room
    with pytest.raises(ValidationError, match="leaves a topic without words"):
        _params(vocab=8, topics=8, size_decay=3.0)


def test_bridge_words_and_phi():
    home = tp.home_topics(100, 5)
    second = tp.second_topics(home, 5, 0.2, seed=3)
    assert (second >= 0).sum() == 20 and not (second == home).any()
    assert np.array_equal(second, tp.second_topics(home, 5, 0.2, seed=3))
    phi = tp.topic_word(100, 5, 0.1, home, second, zipf=1.0)
    assert np.allclose(phi.sum(1), 1)
    w = int(np.nonzero(second >= 0)[0][0])
    inside = phi[:, w] - 0.1 / 100                     # a bridge word has mass in both topics
    assert (inside[[home[w], second[w]]] > 0).all() and np.allclose(np.delete(inside, [home[w], second[w]]), 0)
    # Zipf: within topic 0 the words' in-topic masses fall as (r + 1)^-1 (pure words only)
    own = np.nonzero((home == 0) & (second < 0))[0]
    r = np.nonzero(home == 0)[0].tolist()
    ranks = np.array([r.index(i) for i in own])
    mass = phi[0, own] - 0.1 / 100
    np.testing.assert_allclose(mass / mass[0], (ranks[0] + 1.0) / (ranks + 1.0))


def test_generate_records_truth_and_is_seeded():
    p = _params(size_decay=0.5, bridge=0.25, zipf=1.0)
    a, b = tp.generate(p, seed=1), tp.generate(p, seed=1)
    assert all(np.array_equal(x, y) for x, y in zip(a.sentences, b.sentences))
    assert a.truth["bridge"] == 0.25 and a.truth["zipf"] == 1.0
    assert sum(1 for s in a.word_truth["topic2"] if s >= 0) == 10
    c = tp.generate(p, seed=2)
    assert not all(np.array_equal(x, y) for x, y in zip(a.sentences, c.sentences))
