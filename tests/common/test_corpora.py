"""The shared corpora: the attribute model against its closed form, window counts by hand,
the folder round trip, the analogy questions gensim ships, and bad parameters."""
from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from stages.common.corpora import GeneratedCorpus, load_corpus, window_counts, write_corpus
from stages.common.corpora import attributes as attr
from stages.common.corpora import topics
from stages.common.corpora.realtext import build_vocab, covered, load_analogies


def test_factors_are_joint_distributions_with_the_right_marginals():
    p, s = np.array([0.2, 0.5, 0.7]), np.array([0.0, 0.3, 0.9])
    Q = attr.factors(p, s)
    assert np.allclose(Q.sum((1, 2)), 1)
    assert np.allclose(Q.sum(2)[:, 0], p) and np.allclose(Q.sum(1)[:, 0], p)
    assert (Q > 0).all()
    # s = 0 is independence
    assert np.allclose(Q[0], np.outer([0.2, 0.8], [0.2, 0.8]))


def test_sampled_pairs_match_the_kronecker_joint():
    K = 3
    p, s = np.array([0.3, 0.4, 0.5]), np.array([0.2, 0.5, 0.8])
    Q = attr.factors(p, s)
    alpha = attr.signs(K)
    idx = (alpha < 0).astype(int)                 # 0 = attribute +1, 1 = attribute -1
    joint = np.ones((2 ** K, 2 ** K))
    for k in range(K):
        joint *= Q[k][idx[:, k][:, None], idx[:, k][None, :]]
    assert np.isclose(joint.sum(), 1)
    i, j = attr.sample_pairs(Q, 400_000, np.random.default_rng(0))
    freq = np.bincount(i * 2 ** K + j, minlength=4 ** K).reshape(2 ** K, 2 ** K) / len(i)
    assert np.abs(freq - joint).max() < 4 * np.sqrt(joint.max() / len(i))   # within ~4 sigma
    # id i has attribute k = +1 exactly when bit k is set
    assert alpha[0b101].tolist() == [1, -1, 1]
    assert attr.vocab_names(3)[0b101] == "w101"


def test_window_counts_by_hand():
    # sentence a b a c, window 1: pairs (a,b) (b,a) (a,c) each once, both directions
    m = window_counts([[0, 1, 0, 2]], 3, 1).toarray()
    assert m.tolist() == [[0, 2, 1], [2, 0, 0], [1, 0, 0]]
    # window 2 adds (a,a) at distance 2 (twice, both directions) and (b,c)
    m2 = window_counts([[0, 1, 0, 2]], 3, 2).toarray()
    assert m2.tolist() == [[2, 2, 1], [2, 0, 1], [1, 1, 0]]


def test_corpus_round_trip(tmp_path):
    c = attr.generate(attr.AttributeCorpusParams(name="t", attributes=3, marginal=[0.3, 0.5],
                                                 strength=[0.1, 0.5], pairs=5000), seed=1)
    write_corpus(tmp_path / "t", c)
    back = load_corpus(tmp_path / "t")
    assert back.vocab == c.vocab
    assert (back.counts != c.counts).nnz == 0
    assert back.word_counts.sum() == 2 * 5000
    assert np.array_equal(np.asarray(back.counts.sum(1)).ravel(), back.word_counts)  # window 1, pairs
    assert back.word_truth["attributes"] == attr.signs(3).tolist()
    assert np.allclose(back.truth["marginal"], [0.3, 0.4, 0.5])
    lines = list(back.lines())
    assert len(lines) == 5000 and all(len(line.split()) == 2 for line in lines)
    assert sum(1 for _ in back.sentences()) == 5000
    # the gzip'd token file holds no name or time: the same corpus gives the same bytes (DVC hash)
    write_corpus(tmp_path / "t2", c)
    assert (tmp_path / "t2" / "tokens.txt.gz").read_bytes() == back.tokens_path.read_bytes()
    # same seed, same corpus; another seed, another
    again = attr.generate(attr.AttributeCorpusParams(name="t", attributes=3, marginal=[0.3, 0.5],
                                                     strength=[0.1, 0.5], pairs=5000), seed=1)
    assert np.array_equal(again.sentences, c.sentences)


def test_topic_corpus_shape_and_truth(tmp_path):
    tp = topics.TopicCorpusParams(name="t", vocab=20, topics=4, documents=30, doc_length=12,
                                  concentration=0.5, overlap=0.2, window=2)
    c = topics.generate(tp, seed=0)
    phi = topics.topic_word(20, 4, 0.2)
    assert np.allclose(phi.sum(1), 1)
    assert len(c.sentences) == 30 and all(len(d) == 12 for d in c.sentences)
    write_corpus(tmp_path / "t", c)
    back = load_corpus(tmp_path / "t")
    assert back.word_truth["topic"] == [w % 4 for w in range(20)]
    assert back.word_counts.sum() == 30 * 12
    assert (back.counts != window_counts(c.sentences, 20, 2)).nnz == 0


def test_load_corpus_names_what_is_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing tokens.txt.gz, vocab, counts, truth.json"):
        load_corpus(tmp_path)


def test_write_corpus_rejects_mismatched_truth(tmp_path):
    import scipy.sparse as sp

    c = GeneratedCorpus("x", "test", ["a", "b"], [[0, 1]], sp.csr_matrix((2, 2)), {"topic": [0]})
    with pytest.raises(ValueError, match="ground truth 'topic' has 1 rows, not 2"):
        write_corpus(tmp_path / "x", c)


def test_analogy_questions_and_coverage():
    qs = load_analogies()
    assert len(qs) == 19544                         # Mikolov et al. 2013: 8,869 semantic + 10,675 syntactic
    assert len({q.section for q in qs}) == 14
    assert qs[0].section == "capital-common-countries" and (qs[0].a, qs[0].d) == ("athens", "iraq")
    four = {"athens", "greece", "baghdad", "iraq"}
    got = covered(qs, four)
    assert qs[0] in got and all({q.a, q.b, q.c, q.d} == four for q in got)   # the set has both orders
    assert covered(qs, four - {"iraq"}) == []
    assert build_vocab([["b", "a", "b"], ["c", "a"]], min_count=2) == ["a", "b"]


def test_bad_attribute_params_name_the_problem():
    with pytest.raises(ValidationError, match="strength must satisfy 0 <= lo <= hi < 1"):
        attr.AttributeCorpusParams(name="x", attributes=4, marginal=[0.3, 0.5], strength=[0.5, 1.2],
                                   pairs=5000)
    with pytest.raises(ValidationError, match="attributes"):
        attr.AttributeCorpusParams(name="x", attributes=40, marginal=[0.3, 0.5], strength=[0.1, 0.2],
                                   pairs=5000)


@pytest.mark.study
def test_corpora_stages_rerun_to_the_same_outputs(rerun_study):
    """In the session's smoke build: the corpora stages run once more write the same bytes
    (token files, vocab and count datasets, ground truth). The topic corpora have no stage:
    w2v_quartic draws one on every verdict seed."""
    out = rerun_study("corpora")
    assert {"attributes", "realtext"} <= set(out)
