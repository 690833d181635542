"""attr_analogy maths against what is known: the Kronecker-structured M equals the dense ratio
P(i,j)/(P(i)P(j)); its spectrum equals a dense eigendecomposition; log M has rank K+1 and its
top K+1 eigenvectors give exact parallelograms; analogy scoring on hand-made cases; the
sampled corpus's attribute marginals match p_k."""
from __future__ import annotations

import numpy as np
import pytest

from stages.attr_analogy import model as m
from stages.common.corpora import attributes as attr

P3 = np.array([0.3, 0.4, 0.5])
S3 = np.array([0.2, 0.5, 0.8])


def test_kronecker_m_equals_dense_ratio():
    """dense_m (product of the 2x2 factors m_k) == P(i,j) / (P(i) P(j)) cell by cell, and == np.kron."""
    P = m.dense_joint(P3, S3)
    pi = m.unigram(P3)
    assert np.isclose(P.sum(), 1)
    assert np.allclose(P.sum(1), pi)                          # marginals of the joint = P(i)
    ratio = P / np.outer(pi, pi)
    assert np.allclose(m.dense_m(P3, S3), ratio, rtol=1e-12)
    # word id bits are attributes 0..K-1 (bit k set = +1 = factor index 0): kron from attribute K-1 down
    f = m.m_factors(P3, S3)
    flip = np.array([[0, 1], [1, 0]])                         # factor order (+, -) -> bit order (0=-, 1=+)
    kron = np.ones((1, 1))
    for k in reversed(range(3)):
        kron = np.kron(kron, flip @ f[k] @ flip)
    assert np.allclose(kron, ratio, rtol=1e-12)


def test_m_from_counts_recovers_m_from_the_exact_joint():
    """m_from_counts on the exact probabilities (as 'counts') gives the exact M."""
    P = m.dense_joint(P3, S3)
    assert np.allclose(m.m_from_counts(P * 1e6), m.dense_m(P3, S3), rtol=1e-10)


def test_exact_m_spectrum_equals_dense_eigendecomposition():
    """Kronecker eigenpairs (no V x V matrix) == numpy eigh of the dense M, all 2^K of them."""
    p, s = np.array([0.3, 0.35, 0.45, 0.5]), np.array([0.1, 0.3, 0.6, 0.9])
    M = m.dense_m(p, s)
    spec = m.exact_m_spectrum(p, s, 16)
    dense = np.sort(np.linalg.eigvalsh(M))[::-1]
    assert np.allclose(spec.values, dense, rtol=1e-10)
    assert np.allclose(M @ spec.vectors, spec.vectors * spec.values, atol=1e-10)
    assert np.allclose(spec.vectors.T @ spec.vectors, np.eye(16), atol=1e-10)
    assert (spec.values > 0).all()                            # each factor is positive definite


def test_m_spectrum_order_constant_then_attributes():
    """Narrow spread: M's top mode is the constant/frequency mode, the next K are the attributes."""
    p, s = np.linspace(0.3, 0.5, 5), np.linspace(0.4, 0.6, 5)
    spec = m.exact_m_spectrum(p, s, 6)
    alpha = 1 - 2 * m.attribute_index(5)
    assert np.all(spec.vectors[:, 0] > 0)                     # Perron vector, no sign change
    for j in range(1, 6):                                     # each correlates with one attribute
        corr = np.abs(np.corrcoef(spec.vectors[:, j], alpha.T)[0, 1:])
        assert corr.max() > 0.9


def test_logm_has_rank_k_plus_1_and_is_reconstructed():
    """log M (dense) has numerical rank K+1; the factorised spectrum reproduces it exactly."""
    K = 5
    p, s = np.linspace(0.3, 0.5, K), np.linspace(0.05, 0.9, K)
    L = np.log(m.dense_m(p, s))
    sv = np.linalg.svd(L, compute_uv=False)
    assert (sv > 1e-9 * sv[0]).sum() == K + 1
    spec = m.exact_logm_spectrum(p, s)
    assert len(spec.values) == K + 1
    assert np.allclose(spec.vectors @ np.diag(spec.values) @ spec.vectors.T, L, atol=1e-9)


def test_logm_top_k_plus_1_gives_exact_parallelograms():
    """Embeddings from log M's K+1 eigenvectors are affine in the attributes: W_b - W_a + W_c = W_d."""
    K = 6
    p, s = np.linspace(0.3, 0.5, K), np.linspace(0.05, 0.9, K)
    W = m.exact_logm_spectrum(p, s).embedding(K + 1)
    q = m.flip_analogies(K, 50, np.random.default_rng(0))
    assert np.allclose(W[q.b] - W[q.a] + W[q.c], W[q.d], atol=1e-10)
    assert m.accuracy(W, q, "eq13") == 1.0 and m.accuracy(W, q, "3cosadd") == 1.0
    # the exact log M spectrum is complete: more columns are zeros, the answer does not change
    assert np.allclose(m.exact_logm_spectrum(p, s).embedding(K + 4)[:, K + 1:], 0)


def test_hand_parallelogram_scores_one():
    """Four words on an exact parallelogram plus distractors: both scorings get it right."""
    # a, b, c, d: a rectangle on the unit circle (b - a = d - c, every row unit-norm, so the
    # normalised target is d itself), then two distractors
    W = np.array([[0.6, -0.8], [0.6, 0.8], [-0.6, -0.8], [-0.6, 0.8], [0.8, -0.6], [-1.0, 0.1]])
    q = m.Analogies(np.array([0]), np.array([1]), np.array([2]), np.array([3]), np.array([0]))
    assert m.accuracy(W, q, "eq13") == 1.0
    assert m.accuracy(W, q, "3cosadd") == 1.0


def test_eq13_keeps_query_words_3cosadd_excludes_them():
    """When the query word c sits closest to the target, Eq. 13 answers c (a miss), 3CosAdd skips it."""
    W = np.array([[1.0, 0.0], [1.0, 0.05], [0.0, 1.0], [0.6, 1.0], [-1.0, -1.0]])
    q = m.Analogies(np.array([0]), np.array([1]), np.array([2]), np.array([3]), np.array([0]))
    Wn = W / np.linalg.norm(W, axis=1, keepdims=True)
    t = Wn[1] - Wn[0] + Wn[2]
    cos = Wn @ (t / np.linalg.norm(t))
    assert np.argmax(cos) == 2                                # c is the nearest word
    assert m.accuracy(W, q, "eq13") == 0.0
    assert m.accuracy(W, q, "3cosadd") == 1.0


def test_ties_count_as_misses():
    """Two words with the same embedding cannot be told apart: a tie for the top is a miss."""
    W = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 2.0], [0.0, 2.0]])
    q = m.Analogies(np.array([0]), np.array([1]), np.array([2]), np.array([3]), np.array([0]))
    assert m.accuracy(W, q, "3cosadd") == 0.0
    with pytest.raises(ValueError, match="scoring"):
        m.accuracy(W, q, "cosmul")


def test_flip_analogies_are_attribute_flips():
    """b = a with attribute r flipped, d = c flipped, a and c share attribute r, c not in {a, b}."""
    K = 5
    q = m.flip_analogies(K, 40, np.random.default_rng(1))
    assert len(q) == 40 * K
    bit = 1 << q.relation
    assert np.array_equal(q.b, q.a ^ bit) and np.array_equal(q.d, q.c ^ bit)
    assert np.array_equal(q.a & bit, q.c & bit)
    assert not np.any(q.c == q.a) and not np.any(q.c == q.b)
    words = np.sort(np.random.default_rng(2).choice(2 ** K, 20, replace=False))
    qs = m.flip_analogies(K, 40, np.random.default_rng(3), words=words)
    assert np.isin(np.concatenate([qs.a, qs.b, qs.c, qs.d]), words).all()


def test_sampled_counts_marginals_match_p():
    """The corpora stage's sampled pairs: each attribute's frequency among tokens is p_k (4 sigma)."""
    cp = attr.AttributeCorpusParams(name="t", attributes=4, marginal=[0.2, 0.5], strength=[0.3, 0.7],
                                    pairs=200_000)
    c = attr.generate(cp, seed=0)
    counts = np.asarray(c.counts.sum(1)).ravel()             # occurrences per word id
    n = counts.sum()
    alpha = attr.signs(4)
    p = np.linspace(0.2, 0.5, 4)
    freq = (counts[:, None] * (alpha > 0)).sum(0) / n
    assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / (n / 2)))
    # and the count matrix estimates M: sampled M-hat within noise of the exact M on common cells
    Mhat = m.m_from_counts(c.counts)
    M = m.dense_m(p, np.linspace(0.3, 0.7, 4))
    big = c.counts.toarray() > 400
    assert np.abs(Mhat[big] / M[big] - 1).max() < 0.25


def test_remove_relation_pairs_zeroes_exactly_the_flip_cells():
    K = 3
    C = np.arange(64, dtype=float).reshape(8, 8) + 1
    out = m.remove_relation_pairs(C, K, 1)
    i = np.arange(8)
    assert (out[i, i ^ 2] == 0).all()
    mask = np.ones_like(C, bool)
    mask[i, i ^ 2] = False
    assert np.array_equal(out[mask], C[mask])
    assert C.min() > 0                                        # the input is untouched


def test_relation_mask_is_what_removal_zeroes():
    K = 4
    C = np.ones((2 ** K, 2 ** K))
    for r in range(K):
        mask = m.relation_mask(K, r)
        assert mask.sum() == 2 ** K and (mask == mask.T).all()
        assert ((m.remove_relation_pairs(C, K, r) == 0) == mask).all()


def test_hard_impute_recovers_missing_cells_of_a_low_rank_matrix():
    # the exact log M of the attribute model has rank K+1: its cells on one relation's flip
    # pairs, hidden, are predicted by the rest of the matrix
    K = 5
    p, s = np.linspace(0.3, 0.5, K), np.linspace(0.4, 0.6, K)
    L = np.log(m.dense_m(p, s))
    mask = m.relation_mask(K, 2)
    filled = m.hard_impute(L, mask, K + 1, iters=200)
    assert np.abs(filled - L).max() < 1e-6
    assert (filled[~mask] == L[~mask]).all()              # observed cells untouched
    assert np.abs(m.hard_impute(L, mask, K + 1, iters=0)[mask]).max() == 0   # start: zeros


def test_log_of_and_pseudocount():
    """Unseen cells: log M-hat = 0 without a pseudocount; with one, no cell is unseen."""
    C = np.array([[4.0, 0.0], [0.0, 4.0]])
    assert np.array_equal(m.log_of(m.m_from_counts(C)), np.array([[np.log(2), 0], [0, np.log(2)]]))
    M = m.m_from_counts(C, 0.5)
    assert (M > 0).all() and np.isclose(M[0, 1], 0.5 * 10 / (5 * 5))


def test_top_spectrum_dense_sparse_and_subset_agree():
    """Largest-|eigenvalue| pairs: full eigh, subset eigh and ARPACK give the same values and spans."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    A = rng.standard_normal((300, 300))
    A = (A + A.T) / 2
    A[np.abs(A) < 1.5] = 0                                    # sparse-ish, indefinite
    full = m.top_spectrum(A, 80)                              # 4n >= V: full eigh
    small = m.top_spectrum(A, 8)
    arp = m.top_spectrum(sp.csr_matrix(A), 8, tol=1e-10)
    ref = np.linalg.eigvalsh(A)
    ref = ref[np.argsort(-np.abs(ref))]
    assert np.allclose(full.values, ref[:80]) and np.allclose(small.values, ref[:8])
    assert np.allclose(arp.values, ref[:8])
    assert np.allclose(np.abs(small.vectors.T @ arp.vectors).diagonal(), 1, atol=1e-6)


def test_noise_helpers_are_seeded_and_shaped():
    P = m.dense_joint(P3, S3)
    a = m.lognormal_noise(P, 0.5, np.random.default_rng(0))
    assert np.allclose(a, a.T) and np.isclose(a.sum(), 1)
    assert np.array_equal(a, m.lognormal_noise(P, 0.5, np.random.default_rng(0)))
    assert np.array_equal(m.lognormal_noise(P, 0.0, np.random.default_rng(0)), P)
    C = m.sample_counts(P, 10_000, np.random.default_rng(1))
    assert np.allclose(C, C.T) and abs(C.sum() / 2 - 10_000) < 5 * 100


def test_wilson_interval_closed_form():
    """Wilson score interval against its formula; 0 hits gives a lower end of 0."""
    from scipy.stats import norm

    h, n = 7, 50
    z = norm.ppf(0.975)
    ph = h / n
    centre = (ph + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n))
    lo, hi = m.wilson_interval(h, n)
    assert np.isclose(lo, centre - half) and np.isclose(hi, centre + half)
    assert m.wilson_interval(0, 20)[0] == 0.0


def test_3cosadd_matches_gensim_most_similar():
    """Our vectorised 3CosAdd answers what gensim's most_similar(positive=[b, c], negative=[a]) does."""
    from gensim.models import KeyedVectors

    rng = np.random.default_rng(4)
    W = rng.standard_normal((60, 5)).astype(np.float32).astype(np.float64)
    q = m.Analogies(*(rng.integers(0, 60, 200) for _ in range(4)), relation=np.zeros(200, int))
    ok = (q.a != q.b) & (q.a != q.c) & (q.b != q.c)
    q = q.subset(ok)
    q = m.Analogies(q.a, q.b, q.c, np.empty_like(q.a), q.relation)
    kv = KeyedVectors(5)
    names = [f"w{i}" for i in range(60)]
    kv.add_vectors(names, W.astype(np.float32))
    q.d[:] = [int(kv.most_similar(positive=[names[b], names[c]], negative=[names[a]], topn=1)[0][0][1:])
              for a, b, c in zip(q.a, q.b, q.c)]
    assert m.predict_hits(W, q, "3cosadd").all()             # gensim's answer is ours, every time
