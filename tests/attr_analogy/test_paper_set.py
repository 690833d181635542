"""The paper's analogy sets T(k1, k2) (Korchinski et al. 2025, Sec. 6) and the paper's removal
(Sec. 9), against cases worked by hand: the K = 4 set listed in full, an embedding whose answers
are known (all hits; half of them once one attribute is dropped), the removal's cells, the
metrics' window statistics, and bad arguments by their message."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from stages.attr_analogy import model as m
from stages.attr_analogy.evaluate import window_stats, removal_exact_metrics


def test_k4_set_listed_by_hand():
    """K = 4: C(4,2) = 6 attribute pairs x 2^(4-2) = 4 base words = 24 quadruples; the pair
    (0, 1) is the four blocks 0:1::2:3, 4:5::6:7, 8:9::10:11, 12:13::14:15 (bit k = attribute k)."""
    q = m.pair_analogies(4)
    assert len(q) == 24
    first = q.subset((q.relation == 0) & (q.second == 1))
    assert first.a.tolist() == [0, 4, 8, 12]
    assert first.b.tolist() == [1, 5, 9, 13]
    assert first.c.tolist() == [2, 6, 10, 14]
    assert first.d.tolist() == [3, 7, 11, 15]
    last = q.subset((q.relation == 2) & (q.second == 3))     # bits 2, 3 clear: 0..3
    assert last.a.tolist() == [0, 1, 2, 3] and last.d.tolist() == [12, 13, 14, 15]
    pairs = sorted(set(zip(q.relation.tolist(), q.second.tolist())))
    assert pairs == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]


@pytest.mark.parametrize("K", [2, 3, 5, 8])
def test_set_structure(K):
    """a and b differ in k1 only, a and c in k2 only, d = both flipped; alpha_0(k1) =
    alpha_0(k2) = -1; K (K-1) / 2 * 2^(K-2) quadruples, all distinct."""
    q = m.pair_analogies(K)
    assert len(q) == K * (K - 1) // 2 * 2 ** (K - 2)
    b1, b2 = 1 << q.relation, 1 << q.second
    assert np.array_equal(q.a ^ q.b, b1) and np.array_equal(q.a ^ q.c, b2)
    assert np.array_equal(q.d, q.a | b1 | b2)
    assert not np.any(q.a & (b1 | b2))                      # both attributes -1 on the base word
    assert (q.relation < q.second).all()
    assert len(set(zip(q.a.tolist(), q.d.tolist()))) == len(q)


def test_involves_counts_pairs_with_the_attribute():
    """Attribute r is in K-1 of the K(K-1)/2 pairs: (K-1) 2^(K-2) analogies involve it."""
    K = 5
    q = m.pair_analogies(K)
    for r in range(K):
        assert q.involves(r).sum() == (K - 1) * 2 ** (K - 2)
    flips = m.flip_analogies(K, 20, np.random.default_rng(0))      # no `second`: the relation only
    assert np.array_equal(flips.involves(2), flips.relation == 2)


def _affine_embedding(K: int) -> np.ndarray:
    """W_i = [1, alpha_i]: every row of norm sqrt(K+1), so w_b - w_a + w_c is w_d exactly after
    the unit normalisation too."""
    alpha = 1 - 2 * m.attribute_index(K).astype(float)
    return np.hstack([np.ones((2 ** K, 1)), alpha])


def test_known_answers_all_hits_then_by_hand_when_an_attribute_is_dropped():
    """The affine embedding answers every T analogy (both scorings). Drop attribute 0's column:
    each word then shares its vector with its attribute-0 twin (only with it: rows are +/-1 of
    equal norm). Pairs (0, k2): a = b and c = d in the embedding, the target is c's own vector,
    so Eq. 13 (c kept) ties c with d, a miss, and the exclude-a,b,c rule finds d, a hit. The
    other pairs: the target is d's vector, which d's twin shares: a tie, a miss, both rules.
    K = 4: Eq. 13 scores 0, exclude-a,b,c 3 of the 6 pairs = 0.5, exactly those involving 0."""
    K = 4
    q = m.pair_analogies(K)
    W = _affine_embedding(K)
    assert m.accuracy(W, q, "eq13") == 1.0 and m.accuracy(W, q, "3cosadd") == 1.0
    W0 = np.delete(W, 1, axis=1)
    assert m.accuracy(W0, q, "eq13") == 0.0
    hits = m.predict_hits(W0, q, "3cosadd")
    assert hits.mean() == 0.5 and np.array_equal(hits, q.involves(0))


def test_exact_logm_answers_every_t_analogy_at_k_plus_1():
    """Sec. 6 Result 3: log M's top K+1 eigenvectors are affine in the attributes, so every
    T(k1, k2) parallelogram closes, narrow or broad s_k."""
    K = 6
    q = m.pair_analogies(K)
    for s in (np.linspace(0.4, 0.6, K), np.linspace(0.05, 0.9, K)):
        W = m.exact_logm_spectrum(np.linspace(0.3, 0.5, K), s).embedding(K + 1)
        assert np.allclose(W[q.b] - W[q.a] + W[q.c], W[q.d], atol=1e-10)
        assert m.accuracy(W, q, "eq13") == 1.0


def test_sampled_base_words_are_a_seeded_subset():
    full = m.pair_analogies(5)
    a = m.pair_analogies(5, 3, np.random.default_rng([0, 5]))
    b = m.pair_analogies(5, 3, np.random.default_rng([0, 5]))
    c = m.pair_analogies(5, 3, np.random.default_rng([1, 5]))
    assert len(a) == 10 * 3
    assert np.array_equal(a.a, b.a) and not np.array_equal(a.a, c.a)
    quads = set(zip(full.a.tolist(), full.b.tolist(), full.c.tolist(), full.d.tolist()))
    assert set(zip(a.a.tolist(), a.b.tolist(), a.c.tolist(), a.d.tolist())) <= quads
    assert np.array_equal(m.pair_analogies(5, 8).a, full.a)   # all 2^(K-2): no rng needed


@pytest.mark.parametrize("K, base_words, rng, message", [
    (1, None, None, "K >= 2"),
    (4, 0, None, "base_words = 0: must be 1..4"),
    (4, 5, None, "base_words = 5: must be 1..4"),
    (4, 2, None, "pass rng"),
])
def test_bad_arguments(K, base_words, rng, message):
    with pytest.raises(ValueError, match=message):
        m.pair_analogies(K, base_words, rng)


def test_prune_relation_logm_zeroes_only_the_relation_pairs():
    """Sec. 9: log M' = 0 on the 2^(K-1) pairs (2^K cells) that differ in the attribute only."""
    K = 4
    L = np.log(m.dense_m(np.linspace(0.3, 0.5, K), np.linspace(0.2, 0.8, K)))
    out = m.prune_relation_logm(L, K, 2)
    i = np.arange(2 ** K)
    assert (out[i, i ^ 4] == 0).all() and (out != L).sum() == 2 ** K
    assert np.allclose(out, out.T) and not (L == 0).any()


def test_strongest_and_weakest_attribute():
    """With equal marginals, the log M coupling gamma_k grows with s_k."""
    p = np.full(5, 0.4)
    s = np.array([0.3, 0.9, 0.1, 0.5, 0.6])
    assert m.strongest_weakest(p, s) == (1, 2)


def test_window_stats_by_hand():
    w = window_stats([0.0, 0.2, 0.9, 1.0, 0.7, 0.1], 1, 4)
    assert w == {"best": 1.0, "best_at": 3, "mean": pytest.approx(0.7), "drop": pytest.approx(0.3)}
    # a flat curve has no drop; a tie for the best takes the first k
    assert window_stats([1.0, 1.0, 1.0], 0, 2) == {"best": 1.0, "best_at": 0, "mean": 1.0, "drop": 0.0}


def test_removal_exact_metrics_on_a_hand_made_result():
    """K = 2, ks 1..6: pruned / unpruned read at k = K+1 = 3 and over [3, 6]."""
    inv = {"eq13": [0, 0, 1.0, 1.0, 0.5, 0.4]}
    oth = {"eq13": [0, 0, 1.0, 0.8, 1.0, 0.0]}               # 0 at k = 6: that ratio is left out
    entry = {"relation": 0, "n_involving": 3, "n_other": 9,
             "before": {"involving": {"eq13": [1.0] * 6}, "other": {"eq13": [1.0] * 6}},
             "after": {"involving": inv, "other": oth}}
    rx = {"narrow": {"ks": list(range(1, 7)), "pruned": {"strongest": entry}}}
    out = removal_exact_metrics(rx, 2, "eq13")
    s = out["settings"]["narrow_strongest"]
    assert s["pruned_K1"] == 1.0 and s["ratio_min"] == 0.5 and s["ratio_argmin_k"] == 5
    assert out["pruned_acc_K1_min"] == 1.0 and out["pruned_over_unpruned_min"] == 0.5
    assert out["pruned_min_K1_3K"] == 0.4


def test_check_corpora_rejects_too_many_base_words(capsys):
    """pair_base_words above 2^(K-2): exit 2 naming the key, the value and the bound."""
    from stages.attr_analogy.train import check_corpora

    corpora = {"narrow": SimpleNamespace(truth={"attributes": 4, "kind": "attributes"})}
    p = SimpleNamespace(k_max=12, removal_relations=[0, 1], pair_base_words=5)
    with pytest.raises(SystemExit) as info:
        check_corpora(corpora, p)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "attr_analogy.train.pair_base_words = 5" in err and "2^(K-2) = 4" in err
    p.pair_base_words = 4
    assert check_corpora(corpora, p) == 4
