"""w2v_quartic maths: losses and gradients against autograd and the matrix form, the Taylor
relation SGNS -> quartic, the closed-form minimiser, the learning times against the ODE, M* on a
hand-counted corpus, effective rank / plateaus, overlaps and the downstream scores."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.integrate import solve_ivp

from stages.common.corpora import window_counts
from stages.w2v_quartic import model, scores, theory


def _random_target(V: int = 7, seed: int = 0, weights: str = "omniscient") -> tuple[model.Target, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    C = rng.integers(0, 5, (V, V))
    C = C + C.T                                   # symmetric counts, some zero cells
    P = C / C.sum()
    u = rng.random(V) + 0.1
    u /= u.sum()
    if weights == "word2vec":
        A, N = theory.word2vec_weights(P, u, sample=0.05, ns_exponent=0.75, negative=5)
        return model.Target.from_weights(A, N), P, u
    return model.Target.build(P, u), P, u


# --------------------------------------------------------------------------------------
# losses and gradients
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("weights", ["omniscient", "word2vec"])
@pytest.mark.parametrize("kind", model.KINDS)
def test_gradient_matches_autograd(kind, weights):
    """The closed-form gradients equal torch autograd of the pair-by-pair losses (to 1e-12), with
    the omniscient weights (G = 1, factored form) and with word2vec's (a weighted G)."""
    t, _, _ = _random_target(weights=weights)
    assert t.uniform == (weights == "omniscient")
    W = torch.tensor(np.random.default_rng(1).normal(0, 0.7, (7, 3)), requires_grad=True)
    (g,) = torch.autograd.grad(model.loss(kind, W, t), W)
    assert torch.allclose(model.grad(kind, W.detach(), t), g, rtol=0, atol=1e-12)


def test_quartic_loss_is_matrix_factorisation():
    """The reweighted quartic pair loss equals ||W W^T - M*||_F^2 / 4 - ||M*||_F^2 / 4."""
    t, P, u = _random_target()
    M = theory.target_matrix(P, u)
    W = np.random.default_rng(2).normal(0, 0.5, (7, 3))
    lhs = float(model.quartic_loss(torch.tensor(W), t))
    rhs = (np.linalg.norm(W @ W.T - M) ** 2 - np.linalg.norm(M) ** 2) / 4
    assert lhs == pytest.approx(rhs, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(t.M.numpy(), M, rtol=0, atol=1e-14)


def test_weighted_quartic_loss_is_weighted_factorisation():
    """Proposition 2: with any pair weights, the quartic pair loss equals
    sum G (W W^T - M*)^2 / 4 - sum G M*^2 / 4, with G = A + N and M* = 2 (A - N) / G."""
    t, _, _ = _random_target(weights="word2vec")
    G, M = t.G.numpy(), t.M.numpy()
    assert G.std() > 0.1 * G.mean()               # a weighted problem, not the omniscient one
    np.testing.assert_allclose(M, theory.weighted_target(t.A.numpy(), t.N.numpy()), rtol=1e-14)
    W = np.random.default_rng(2).normal(0, 0.5, (7, 3))
    lhs = float(model.quartic_loss(torch.tensor(W), t))
    rhs = ((G * (W @ W.T - M) ** 2).sum() - (G * M * M).sum()) / 4
    assert lhs == pytest.approx(rhs, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("weights", ["omniscient", "word2vec"])
def test_quartic_is_fourth_order_taylor_of_sgns(weights):
    """SGNS - quartic = O(|W|^8) at small W: halving W divides the difference by ~2^8."""
    t, _, _ = _random_target(weights=weights)
    W = torch.tensor(np.random.default_rng(3).normal(0, 1, (7, 3)))
    diffs = [abs(float(model.sgns_loss(s * W, t) - model.quartic_loss(s * W, t))) for s in (0.1, 0.05)]
    assert diffs[0] > 0
    assert 2 ** 7 < diffs[0] / diffs[1] < 2 ** 9
    # and the two gradients agree to first order at the origin: both are -M* W there
    small = 1e-6 * W
    np.testing.assert_allclose(model.sgns_grad(small, t).numpy(), model.quartic_grad(small, t).numpy(),
                               rtol=1e-9, atol=1e-20)


def test_sgns_stationary_point_is_pmi():
    """With the reweighting, SGNS's pairwise optimum is x = PMI = log(P_ij / P_i P_j)."""
    t, P, u = _random_target()
    pos = P > 0
    pmi = np.log(P[pos] / np.outer(u, u)[pos])
    M = t.M.numpy()[pos]
    np.testing.assert_allclose(2 * np.tanh(pmi / 2), M, rtol=1e-12)


# --------------------------------------------------------------------------------------
# closed form and dynamics
# --------------------------------------------------------------------------------------
def test_closed_form_is_the_minimiser():
    """V_d Lambda_d^(1/2) has zero quartic gradient, and gradient descent from small init ends
    at W W^T = its Gram matrix (the top-d truncation of M*)."""
    t, P, u = _random_target(V=6, seed=4)
    spec = theory.spectrum(t.M.numpy(), 6)
    lam, U = spec.top(2)
    assert lam[1] > 0
    Wstar = theory.closed_form(lam, U)
    assert np.abs(model.quartic_grad(torch.tensor(Wstar), t).numpy()).max() < 1e-12
    W0 = model.init_weights(6, 2, 1e-6, 0)
    res = model.train("quartic", t, W0, theory.step_size(spec, 0.2), 4000, 4000,
                      torch.tensor(U), 2)
    np.testing.assert_allclose(res["W"] @ res["W"].T, Wstar @ Wstar.T, atol=1e-8)
    assert res["overlap"][-1] == pytest.approx(1.0, abs=1e-10)
    # the closed form has the lowest loss among many random W
    best = float(model.quartic_loss(torch.tensor(Wstar), t))
    rng = np.random.default_rng(0)
    assert all(float(model.quartic_loss(torch.tensor(rng.normal(0, 1, (6, 2))), t)) > best
               for _ in range(50))


@pytest.mark.parametrize("lam,p0", [(3.0, 1e-10), (0.5, 1e-6), (10.0, 1e-20)])
def test_half_time_matches_the_ode(lam, p0):
    """The logistic half-time equals a numerical solution of dp/dt = 2 p (lambda - p), and the
    paper's tau = ln(lambda / p0) / (2 lambda) differs from it by < 1 / (2 lambda) * p0 / lambda."""
    t_exact = theory.half_time(lam, p0)
    sol = solve_ivp(lambda t, y: [2 * y[0] * (lam - y[0])], (0, 3 * t_exact), [p0],
                    dense_output=True, rtol=1e-10, atol=1e-30, method="LSODA",
                    events=lambda t, y: y[0] - lam / 2)
    assert sol.t_events[0][0] == pytest.approx(t_exact, rel=1e-5)
    ts = np.linspace(0, 2 * t_exact, 7)
    np.testing.assert_allclose(sol.sol(ts)[0], theory.logistic_projection(lam, p0, ts), rtol=1e-5, atol=1e-25)
    tau = theory.predicted_steps(np.array([lam]), np.array([p0]), eta=1.0)[0]
    assert abs(tau - t_exact) <= p0 / lam / (2 * lam) * 1.01


def test_gradient_descent_learns_each_direction_at_its_predicted_time():
    """Full quartic GD on a diagonal M* with a small, aligned init: each direction's projection
    reaches lambda_k / 2 within 3% of the predicted step tau_k / eta (small step: near the flow)."""
    lam = np.array([4.0, 2.0, 1.0, -3.0])
    M = np.diag(lam)
    t = model.Target(A=torch.zeros(4, 4), N=torch.zeros(4, 4), G=torch.ones(4, 4),
                     M=torch.tensor(M), uniform=True)
    W0 = torch.tensor(np.diag([1e-8, 2e-8, 1e-8, 1e-8])[:, :3])
    eta = 0.01 / 4
    steps = 40000
    res = model.train("quartic", t, W0, eta, steps, 10, torch.eye(4, dtype=torch.float64), 3)
    p0 = (W0.numpy() ** 2).sum(1)
    meas = theory.crossing_steps(res["step"], res["proj"][:, :3], lam[:3] / 2)
    pred = theory.predicted_steps(lam[:3], p0[:3], eta)
    np.testing.assert_allclose(meas, pred, rtol=0.03)
    assert res["proj"][-1, 3] < 1e-20               # the negative direction decays


# --------------------------------------------------------------------------------------
# M* from a hand-counted corpus
# --------------------------------------------------------------------------------------
def test_target_matrix_on_hand_counted_corpus():
    """Sentence 'a b a c', window 1: counts ab = ba = 2, ac = ca = 1 (total 6); unigrams
    a = 1/2, b = c = 1/4. M*_ab = 2 (1/3 - 1/8) / (1/3 + 1/8) = 10/11, M*_ac = 2/7, and -2
    wherever a pair never co-occurs."""
    counts = window_counts([[0, 1, 0, 2]], 3, 1)
    keep = theory.keep_words(np.array([2, 1, 1]))
    P, u = theory.cooccurrence_stats(counts, np.array([2, 1, 1]), keep)
    np.testing.assert_allclose(P * 6, [[0, 2, 1], [2, 0, 0], [1, 0, 0]])
    np.testing.assert_allclose(u, [0.5, 0.25, 0.25])
    M = theory.target_matrix(P, u)
    expected = np.array([[-2, 10 / 11, 2 / 7], [10 / 11, -2, -2], [2 / 7, -2, -2]])
    np.testing.assert_allclose(M, expected, rtol=1e-14)


def test_keep_words_top_n_and_unseen():
    wc = np.array([5, 0, 9, 1, 9, 3])
    assert theory.keep_words(wc).tolist() == [0, 2, 3, 4, 5]
    assert theory.keep_words(wc, 3).tolist() == [0, 2, 4]
    with pytest.raises(ValueError, match="positive unigram"):
        theory.target_matrix(np.eye(2) / 2, np.array([1.0, 0.0]))


# --------------------------------------------------------------------------------------
# the paper's own setup: window weighting, subsampling, word2vec's pair weights
# --------------------------------------------------------------------------------------
def test_window_weights_and_weighted_counts_by_hand():
    """Sentence 'a b a c', window 2. Linear weights (3 - j) / 2: 1 at distance 1, 1/2 at 2.
    Distance-1 pairs ab, ba, ac; distance-2 pairs aa, bc: C_ab = 2, C_ac = 1, C_aa = 2 x 1/2,
    C_bc = 1/2. Uniform weights give the corpora's own counts; dropping c from the kept words
    keeps the distances of the others."""
    np.testing.assert_allclose(theory.window_weights(2, "linear"), [1.0, 0.5])
    np.testing.assert_allclose(theory.window_weights(5, "linear"), [1, 0.8, 0.6, 0.4, 0.2])
    np.testing.assert_allclose(theory.window_weights(3, "uniform"), [1, 1, 1])
    sent = [[0, 1, 0, 2]]
    C = theory.weighted_window_counts(sent, np.arange(3), 3, 2, "linear")
    np.testing.assert_allclose(C, [[1, 2, 1], [2, 0, 0.5], [1, 0.5, 0]])
    U = theory.weighted_window_counts(sent, np.arange(3), 3, 2, "uniform")
    np.testing.assert_allclose(U, window_counts(sent, 3, 2).toarray())
    np.testing.assert_allclose(theory.weighted_window_counts(sent, np.array([0, 1]), 3, 2, "linear"),
                               [[1, 2], [2, 0]])
    with pytest.raises(ValueError, match="unknown window weighting 'triangle'"):
        theory.window_weights(2, "triangle")
    with pytest.raises(ValueError, match="window must be >= 1"):
        theory.window_weights(0, "linear")


def test_keep_probability_by_hand_and_against_gensim():
    """word2vec's subsampling: u = 4 s is kept with probability (2 + 1) / 4; rare words always;
    and gensim's own table (sample_int / 2^32) gives the same numbers on a small corpus."""
    np.testing.assert_allclose(theory.keep_probability(np.array([0.8, 0.2, 0.01]), 0.2), [0.75, 1.0, 1.0])
    np.testing.assert_allclose(theory.keep_probability(np.array([0.5]), 0.0), [1.0])
    with pytest.raises(ValueError, match="sample must be >= 0"):
        theory.keep_probability(np.array([0.5]), -1e-3)
    with pytest.raises(ValueError, match="positive unigram"):
        theory.keep_probability(np.array([0.5, 0.0]), 1e-3)
    from gensim.models import Word2Vec

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(6)]
    freq = np.array([0.4, 0.25, 0.15, 0.1, 0.07, 0.03])
    sents = [list(rng.choice(words, size=50, p=freq)) for _ in range(40)]
    m = Word2Vec(vector_size=2, min_count=1, sample=0.05, workers=1, seed=0)
    m.build_vocab(sents)
    counts = np.array([m.wv.get_vecattr(w, "count") for w in words], dtype=float)
    gensim_keep = np.array([m.wv.get_vecattr(w, "sample_int") for w in words]) / 2 ** 32
    np.testing.assert_allclose(theory.keep_probability(counts / counts.sum(), 0.05), gensim_keep, rtol=1e-9)
    assert gensim_keep.min() < 0.9                 # the frequent words are subsampled


def test_word2vec_weights_on_a_tiny_case_by_hand():
    """V = 2, P = [[.1, .4], [.4, .1]], u = (.8, .2), sample .2 -> a = (3/4, 1); ns_exponent 1/2 ->
    n = (2/3, 1/3); k = 2. (P a) = (.475, .4), r = a (P a) = (.35625, .4);
    A = P a a^T = [[.05625, .3], [.3, .1]]; N = r n^T + n r^T = [[.475, .3854167], [.3854167, .2666667]];
    then both divided by mean(A + N) = 2.26875 / 4; M* = 2 (A - N) / (A + N)."""
    P = np.array([[0.1, 0.4], [0.4, 0.1]])
    u = np.array([0.8, 0.2])
    A, N = theory.word2vec_weights(P, u, sample=0.2, ns_exponent=0.5, negative=2)
    A0 = np.array([[0.05625, 0.3], [0.3, 0.1]])
    N0 = np.array([[0.475, 0.11875 + 0.8 / 3], [0.11875 + 0.8 / 3, 0.8 / 3]])
    scale = (A0 + N0).sum() / 4
    np.testing.assert_allclose(A, A0 / scale, rtol=1e-12)
    np.testing.assert_allclose(N, N0 / scale, rtol=1e-12)
    assert (A + N).mean() == pytest.approx(1.0, rel=1e-12)
    assert N.sum() == pytest.approx(2 * A.sum(), rel=1e-12)     # k negatives per positive pair
    M = theory.weighted_target(A, N)
    assert M[0, 0] == pytest.approx(2 * (0.05625 - 0.475) / (0.05625 + 0.475), rel=1e-12)
    for kw, msg in ((dict(negative=0), "negative must be > 0"), (dict(ns_exponent=-1), "ns_exponent must be >= 0")):
        with pytest.raises(ValueError, match=msg):
            theory.word2vec_weights(P, u, **{**dict(sample=0.2, ns_exponent=0.5, negative=2), **kw})


def test_word2vec_weights_reduce_to_the_omniscient_target():
    """No subsampling, negatives from the unigram, one per positive, and P's marginals equal to
    u: word2vec's M* is the omniscient M* (only the weights G differ)."""
    rng = np.random.default_rng(5)
    x = rng.random(6) + 0.2
    S = rng.random((6, 6)) * 0.3
    P = np.outer(x, x) * (1 + S + S.T)
    P = P / P.sum()
    u = P.sum(1)
    A, N = theory.word2vec_weights(P, u, sample=0.0, ns_exponent=1.0, negative=1)
    np.testing.assert_allclose(theory.weighted_target(A, N), theory.target_matrix(P, u), rtol=1e-12, atol=1e-14)


def test_word2vec_weights_match_a_simulation_of_word2vec():
    """Monte Carlo of word2vec's procedure on an i.i.d. token stream (so P = u u^T): subsample
    each token, take each context within a dynamic window (width uniform on 1..L), and draw k
    negatives from u^0.75 per positive pair; the symmetrised positive and negative pair counts
    match A and N (both scaled to mean(A + N) = 1) within 3%."""
    rng = np.random.default_rng(11)
    u = np.array([0.5, 0.3, 0.15, 0.05])
    sample, k, L, e = 0.05, 3, 3, 0.75
    x = rng.choice(4, size=400_000, p=u)
    a = theory.keep_probability(u, sample)
    y = x[rng.random(len(x)) < a[x]]
    b = rng.integers(1, L + 1, size=len(y))            # each centre's window
    pos = np.zeros((4, 4))
    neg = np.zeros((4, 4))
    n = u ** e / (u ** e).sum()
    for j in range(1, L + 1):
        for c_idx, o_idx in ((np.arange(len(y) - j), np.arange(j, len(y))), (np.arange(j, len(y)), np.arange(len(y) - j))):
            ok = b[c_idx] >= j
            c, o = y[c_idx[ok]], y[o_idx[ok]]
            np.add.at(pos, (c, o), 1)
            draws = rng.choice(4, size=(len(o), k), p=n)
            np.add.at(neg, (np.repeat(o, k), draws.ravel()), 1)
    pos, neg = (pos + pos.T) / 2, (neg + neg.T) / 2
    scale = (pos + neg).mean()
    A, N = theory.word2vec_weights(np.outer(u, u), u, sample, e, k)
    np.testing.assert_allclose(pos / scale, A, rtol=0.03)
    np.testing.assert_allclose(neg / scale, N, rtol=0.03)


# --------------------------------------------------------------------------------------
# effective rank, plateaus, overlaps
# --------------------------------------------------------------------------------------
def test_effective_rank_and_plateaus_on_a_staircase():
    """A hand-made staircase: sigma_k^2 switch on at steps 10, 20, 40 (direction 3 and 4 together
    at 40); levels 1 and 2 are plateaus, level 3 is skipped."""
    steps = np.arange(0, 60)
    on = np.array([10, 20, 40, 40])
    sv2 = np.where(steps[:, None] >= on[None, :], 1.0, 1e-9)
    rank = theory.effective_rank(sv2, 0.5)
    assert rank[[0, 10, 19, 20, 39, 40, 59]].tolist() == [0, 1, 1, 2, 2, 4, 4]
    lam = np.array([8.0, 4.0, 2.0, 1.95, 0.1])
    levels = theory.resolvable_levels(lam, 4, 0.05)
    assert levels.tolist() == [1, 2]              # 2.0 -> 1.95 is a 2.5% gap: not resolvable
    pl = theory.plateaus(steps, rank, levels, min_frac=0.1)
    assert pl["n_plateaus"] == 2 and pl["plateaus"] == {1: [10, 20], 2: [20, 40]}
    assert pl["skipped_levels"] == [] and pl["max_jump"] == 2 and pl["final_rank"] == 4
    # with level 3 resolvable it counts as skipped; a plateau shorter than min_frac does not count
    pl3 = theory.plateaus(steps, rank, np.array([1, 2, 3]), min_frac=0.3)
    assert pl3["skipped_levels"] == [3] and pl3["plateaus"] == {2: [20, 40]}   # 10 < 0.3 x 40 <= 20


def test_crossing_steps():
    steps = np.array([0, 5, 10, 15])
    vals = np.array([[0, 0], [1, 0], [3, 0], [4, 0.1]])
    out = theory.crossing_steps(steps, vals, np.array([2.0, 1.0]))
    assert out[0] == 10 and np.isnan(out[1])


def test_subspace_overlap():
    rng = np.random.default_rng(0)
    U = np.linalg.qr(rng.normal(size=(20, 3)))[0]
    R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    assert theory.subspace_overlap(U @ R * 5, U) == pytest.approx(1.0, abs=1e-12)
    other = np.linalg.qr(np.hstack([U, rng.normal(size=(20, 3))]))[0][:, 3:]
    assert theory.subspace_overlap(other, U) == pytest.approx(0.0, abs=1e-12)
    half = np.hstack([U[:, :1], other[:, :2]])
    assert theory.subspace_overlap(half, U) == pytest.approx(1 / 3, abs=1e-12)


def test_spectrum_sorted_and_signed():
    M = np.diag([1.0, 3.0, -2.0])
    spec = theory.spectrum(M, 2)
    assert spec.values.tolist() == [3.0, 1.0, -2.0] and spec.max_abs == 3.0
    np.testing.assert_allclose(spec.vectors, [[0, 1], [1, 0], [0, 0]], atol=1e-15)
    assert theory.step_size(spec, 0.3) == pytest.approx(0.1)


# --------------------------------------------------------------------------------------
# downstream scores
# --------------------------------------------------------------------------------------
def test_retrieval_precision_by_hand():
    """Two tight clusters {0,1,2} / {3,4,5}; word 5 also belongs to topic 0 (a bridge word)."""
    E = np.array([[1, 0], [1, 0.1], [1, -0.1], [0, 1], [0.1, 1], [0.05, 1]])
    topic = [0, 0, 0, 1, 1, 1]
    # k=2: every word's two nearest are its own cluster -> 1.0
    assert scores.retrieval_precision(E, topic, k=2) == 1.0
    # k=3 without bridges: each word gets one wrong neighbour -> 2/3
    assert scores.retrieval_precision(E, topic, k=3) == pytest.approx(2 / 3)
    # word 5 shares topic 0: pairs (5, cluster-0 word) now count for both sides
    per = scores.retrieval_per_word(E, topic, [-1, -1, -1, -1, -1, 0], k=3)
    assert per[5] == 1.0 and per[3] == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        scores.retrieval_precision(E, topic, k=6)


def test_analogy_accuracy_parallelogram():
    """Words on a parallelogram (a, b, c, d = c + b - a) plus distractors: 3CosAdd answers d."""
    E = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 1, 1], [1, -1, 0.2], [-1, 0, 0]], dtype=float)
    assert scores.analogy_accuracy(E, np.array([[0, 1, 2, 3], [2, 3, 0, 1]])) == 1.0
    assert scores.analogy_accuracy(E, np.array([[0, 1, 2, 5]])) == 0.0
    assert np.isnan(scores.analogy_accuracy(E, np.zeros((0, 4))))


def test_similarity_spearman():
    E = np.array([[1, 0], [1, 0.1], [1, 1], [0, 1]], dtype=float)
    pairs = np.array([[0, 1], [0, 2], [0, 3]])
    assert scores.similarity_spearman(E, pairs, np.array([9.0, 5.0, 1.0])) == pytest.approx(1.0)
    assert scores.similarity_spearman(E, pairs, np.array([1.0, 5.0, 9.0])) == pytest.approx(-1.0)
