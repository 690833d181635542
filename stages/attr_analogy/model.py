"""The maths of the attr_analogy study: exact spectra of M and log M for the binary-attribute
model, their estimates from counts, embeddings from top eigenvectors, the two analogy sets
(the paper's T(k1, k2), :func:`pair_analogies`, and attribute flips, :func:`flip_analogies`)
and their two scorings.

Model (Korchinski, Karkada, Bahri, Wyart 2025; the generator is
:mod:`stages.common.corpora.attributes`): word i is alpha_i in {-1,+1}^K and

    M(i, j) = P(i, j) / (P(i) P(j)) = prod_k m_k(alpha_ik, alpha_jk),   m_k = Q_k / (P_k P_k^T),

a Kronecker product of K positive-definite 2x2 factors. Hence

* M's eigenvectors are products of the factors' eigenvectors and its eigenvalues products of
  theirs (:func:`exact_m_spectrum`: exact, O(2^K K) per mode, never the 2^K x 2^K matrix);
* log M(i, j) = sum_k log m_k(alpha_ik, alpha_jk) = C + f_i + f_j + sum_k g_k alpha_ik alpha_jk
  is affine in the attributes on either side, so it has rank <= K+1 with column space
  span{1, alpha_1, ..., alpha_K} (:func:`exact_logm_spectrum`), which makes the embedding of a
  word affine in its attributes, hence exact parallelograms.

Embeddings: W = V_k |Lambda_k|^power from the k eigenpairs of largest |eigenvalue| (the truncated
SVD of the symmetric matrix; log M is indefinite), power 1/2 by default.

Analogy scorings, for a : b :: c : d (d is the answer):

* ``3cosadd`` (the usual benchmark rule: Mikolov; gensim's ``most_similar`` /
  ``evaluate_word_analogies``): unit-normalise the rows, t = w_b - w_a + w_c, the prediction is
  the word of highest cosine with t among the words other than a, b, c;
* ``eq13`` (primary): the same rule with the query words a, b, c kept among the candidates --
  the paper's Eq. 13 does not exclude them (STUDIES.md). The paper's text and code were not
  reachable from here, so "cosine on unit-normalised embeddings" is our reading of Eq. 13;
  it is the only reading under which the two scorings differ by the exclusion alone.
  (Without the normalisation the test is degenerate: an embedding affine in the attributes
  makes W_b - W_a + W_c = W_d exactly for every k >= 2, so any k would score 1.)

A tie for the best score counts as a miss (words whose embeddings coincide cannot be told apart).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TIE_TOL = 1e-9


# --------------------------------------------------------------------------------------
# the exact model
# --------------------------------------------------------------------------------------
def attribute_index(K: int) -> np.ndarray:
    """idx[i, k] = 0 if word i has attribute k = +1 (bit k set) else 1 (the factors' row order)."""
    ids = np.arange(2 ** K)[:, None]
    return 1 - ((ids >> np.arange(K)) & 1)


def m_factors(p: np.ndarray, s: np.ndarray) -> np.ndarray:
    """m_k = Q_k / (P_k P_k^T), shape (K, 2, 2); index 0 = attribute +1."""
    from stages.common.corpora.attributes import factors

    Q = factors(np.asarray(p, float), np.asarray(s, float))
    marg = np.stack([p, 1 - np.asarray(p, float)], -1)               # (K, 2)
    return Q / (marg[:, :, None] * marg[:, None, :])


def unigram(p: np.ndarray) -> np.ndarray:
    """P(i) = prod_k p_k^[alpha_ik = +1] (1 - p_k)^[alpha_ik = -1], shape (2^K,)."""
    p = np.asarray(p, float)
    idx = attribute_index(len(p))
    marg = np.stack([p, 1 - p], -1)
    return np.prod(marg[np.arange(len(p)), idx], axis=1)


def dense_joint(p: np.ndarray, s: np.ndarray) -> np.ndarray:
    """P(i, j), the 2^K x 2^K joint, built cell by cell from the factors Q_k (for tests and
    small K; the study never needs it for the exact spectra)."""
    from stages.common.corpora.attributes import factors

    Q = factors(np.asarray(p, float), np.asarray(s, float))
    idx = attribute_index(len(p))
    P = np.ones((len(idx), len(idx)))
    for k in range(len(p)):
        P *= Q[k][idx[:, k][:, None], idx[:, k][None, :]]
    return P


def dense_m(p: np.ndarray, s: np.ndarray) -> np.ndarray:
    """M(i, j) built as the Kronecker-structured product of the factors m_k."""
    m = m_factors(p, s)
    idx = attribute_index(len(p))
    M = np.ones((len(idx), len(idx)))
    for k in range(len(p)):
        M *= m[k][idx[:, k][:, None], idx[:, k][None, :]]
    return M


def mixture_m(p: np.ndarray, s: np.ndarray) -> np.ndarray:
    """M of the attribute MIXTURE, the control of the (iii) checks: each co-occurring pair is
    correlated through ONE attribute, drawn uniformly (that attribute's pair from Q_k, every other
    attribute of the two words independent), so the attributes' effects ADD up in M instead of
    multiplying: with x_k(+1) = sqrt(q_k / p_k), x_k(-1) = -sqrt(p_k / q_k) (mean 0, variance 1),

        m_k(a, b) = 1 + s_k x_k(a) x_k(b),   M_mix(i, j) = (1/K) sum_k m_k(alpha_ik, alpha_jk),

    which is affine in the attributes on either side (rank <= K+1), while the model's M is the
    product of the m_k. The same marginals p_k and strengths s_k; P_mix(i, j) = P(i) P(j) M_mix
    (:func:`mixture_joint`) keeps the unigram P(i)."""
    m = m_factors(p, s)
    idx = attribute_index(len(p))
    M = np.zeros((len(idx), len(idx)))
    for k in range(len(p)):
        M += m[k][idx[:, k][:, None], idx[:, k][None, :]]
    return M / len(p)


def mixture_joint(p: np.ndarray, s: np.ndarray) -> np.ndarray:
    """P_mix(i, j) = P(i) P(j) M_mix(i, j), the joint of :func:`mixture_m` (sums to 1, its
    marginals are :func:`unigram`)."""
    u = unigram(p)
    return np.outer(u, u) * mixture_m(p, s)


@dataclass
class Spectrum:
    """Eigenpairs sorted by decreasing |eigenvalue|: values (n,), vectors (V, n) orthonormal.
    ``complete``: every eigenvalue left out is 0 (exact log M), so asking for more than n
    eigenvectors pads the embedding with zero columns."""

    values: np.ndarray
    vectors: np.ndarray
    complete: bool = False

    def embedding(self, k: int, power: float = 0.5) -> np.ndarray:
        n = len(self.values)
        if k > n and not self.complete:
            raise ValueError(f"asked for {k} eigenvectors, the spectrum holds {n}")
        W = self.vectors[:, :k] * np.abs(self.values[:k]) ** power
        return np.hstack([W, np.zeros((len(W), k - n))]) if k > n else W


def exact_m_spectrum(p: np.ndarray, s: np.ndarray, n: int) -> Spectrum:
    """The n leading eigenpairs of the exact M, from the 2x2 factors (no V x V matrix).

    Mode S (a subset of attributes, as a bitmask) has eigenvalue prod_k lambda_k[S_k] and
    eigenvector v_S(i) = prod_k e_k[idx_ik, S_k], where (lambda_k, e_k) is the eigen-
    decomposition of m_k with lambda_k[0] >= lambda_k[1]. Ties are broken by the mask."""
    m = m_factors(p, s)
    K = len(m)
    lam, vec = np.linalg.eigh(m)                  # ascending per factor
    lam, vec = lam[:, ::-1], vec[:, :, ::-1]      # [k, 0] = larger
    masks = np.arange(2 ** K)
    bits = (masks[:, None] >> np.arange(K)) & 1   # (2^K, K): which eigenvector of each factor
    log_vals = np.log(lam[np.arange(K), bits]).sum(1)
    order = np.lexsort((masks, -log_vals))[:n]
    idx = attribute_index(K)
    vectors = np.ones((2 ** K, len(order)))
    for k in range(K):
        vectors *= vec[k][idx[:, k][:, None], bits[order, k][None, :]]
    return Spectrum(np.exp(log_vals[order]), vectors)


def logm_affine(p: np.ndarray, s: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """log m_k(a, b) = c0_k + c1_k (x_a + x_b) + c2_k x_a x_b with x = +/-1: returns
    (sum_k c0_k, c1, c2), so log M = C 11^T + f 1^T + 1 f^T + A diag(c2) A^T with f = A c1."""
    L = np.log(m_factors(p, s))
    c0 = (L[:, 0, 0] + 2 * L[:, 0, 1] + L[:, 1, 1]) / 4
    c1 = (L[:, 0, 0] - L[:, 1, 1]) / 4
    c2 = (L[:, 0, 0] - 2 * L[:, 0, 1] + L[:, 1, 1]) / 4
    return float(c0.sum()), c1, c2


def exact_logm_spectrum(p: np.ndarray, s: np.ndarray, words: np.ndarray | None = None) -> Spectrum:
    """All non-zero eigenpairs (at most K+1) of the exact log M, restricted to ``words``
    (default: the whole vocabulary), from its rank-(K+1) factorisation B G B^T with
    B = [1, alpha_1 .. alpha_K]."""
    K = len(p)
    alpha = 1 - 2 * attribute_index(K).astype(float)          # +1 / -1
    if words is not None:
        alpha = alpha[words]
    B = np.hstack([np.ones((len(alpha), 1)), alpha])
    C, c1, c2 = logm_affine(p, s)
    G = np.zeros((K + 1, K + 1))
    G[0, 0] = C
    G[0, 1:] = G[1:, 0] = c1
    G[1:, 1:] = np.diag(c2)
    Qb, R = np.linalg.qr(B)
    vals, U = np.linalg.eigh(R @ G @ R.T)
    order = np.argsort(-np.abs(vals), kind="stable")
    return Spectrum(vals[order], Qb @ U[:, order], complete=True)


# --------------------------------------------------------------------------------------
# estimates from counts
# --------------------------------------------------------------------------------------
def m_from_counts(counts, pseudocount: float = 0.0) -> np.ndarray:
    """Dense M-hat(i, j) = P-hat(i, j) / (P-hat(i) P-hat(j)) from a symmetric count matrix.

    pseudocount = 0: cells never seen are 0 (and words never seen have all-zero rows);
    pseudocount > 0: add it to every cell first (Laplace smoothing)."""
    C = counts.toarray() if hasattr(counts, "toarray") else np.asarray(counts)
    C = C.astype(float) + pseudocount
    N = C.sum()
    r = C.sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(r > 0, 1.0 / r, 0.0)
    return C * N * inv[:, None] * inv[None, :]


def log_of(M: np.ndarray) -> np.ndarray:
    """log M with unseen cells (M = 0) set to 0, i.e. PMI with zeros for missing pairs
    (Levy & Goldberg's PMI_0); with a pseudocount no cell is 0."""
    out = np.zeros_like(M)
    pos = M > 0
    out[pos] = np.log(M[pos])
    return out


def sparse_m_from_counts(counts):
    """Sparse M-hat and log M-hat (PMI_0: unseen cells stay 0) for large vocabularies."""
    import scipy.sparse as sp

    C = sp.csr_matrix(counts, dtype=float)
    N = C.sum()
    r = np.asarray(C.sum(1)).ravel()
    inv = np.where(r > 0, 1.0 / np.where(r > 0, r, 1), 0.0)
    coo = C.tocoo()
    vals = coo.data * N * inv[coo.row] * inv[coo.col]
    M = sp.csr_matrix((vals, (coo.row, coo.col)), shape=C.shape)
    L = sp.csr_matrix((np.log(vals), (coo.row, coo.col)), shape=C.shape)
    return M, L


def top_spectrum(A, n: int, tol: float = 0.0) -> Spectrum:
    """The n eigenpairs of largest |eigenvalue| of a symmetric matrix (dense: LAPACK, on both
    ends of the spectrum when n is small; sparse: ARPACK to relative tolerance ``tol``)."""
    import scipy.sparse as sp

    V = A.shape[0]
    n = min(n, V)
    if sp.issparse(A):
        from scipy.sparse.linalg import eigsh

        vals, vecs = eigsh(A.astype(float), k=n, which="LM", tol=tol, v0=np.ones(V) / np.sqrt(V))
    elif V <= 2048 or 4 * n >= V:
        vals, vecs = np.linalg.eigh(A)
    else:           # MRRR on both ends (bisection + inverse iteration, evx, crawls on the
        import scipy.linalg as sl   # clustered noise eigenvalues of a sampled matrix)

        lo_v, lo_u = sl.eigh(A, subset_by_index=[0, n - 1], driver="evr")
        hi_v, hi_u = sl.eigh(A, subset_by_index=[V - n, V - 1], driver="evr")
        vals, vecs = np.concatenate([lo_v, hi_v]), np.hstack([lo_u, hi_u])
    return _leading(vals, vecs, n)


def top_spectra(stack: np.ndarray, n: int) -> list[Spectrum]:
    """:func:`top_spectrum` of each dense symmetric matrix of ``stack`` (S, V, V) in one batched
    ``eigh`` call (a seed dimension: benchmarks/attr_analogy/seeds.py times it against one
    matrix after another)."""
    vals, vecs = np.linalg.eigh(stack)
    n = min(n, stack.shape[-1])
    return [_leading(v, u, n) for v, u in zip(vals, vecs)]


def _leading(vals: np.ndarray, vecs: np.ndarray, n: int) -> Spectrum:
    """The n eigenpairs of largest |eigenvalue|, each eigenvector's sign fixed."""
    order = np.argsort(-np.abs(vals), kind="stable")[:n]
    vecs = vecs[:, order]
    # fix each eigenvector's sign (largest-|entry| component positive) so runs compare equal
    sign = np.sign(vecs[np.argmax(np.abs(vecs), axis=0), np.arange(vecs.shape[1])])
    return Spectrum(vals[order], vecs * np.where(sign == 0, 1, sign))


# --------------------------------------------------------------------------------------
# analogies
# --------------------------------------------------------------------------------------
@dataclass
class Analogies:
    """a : b :: c : d as word-id arrays, with the relation (attribute index) of each.

    ``second`` (the paper's sets T(k1, k2) only, :func:`pair_analogies`): the attribute in which
    a and c differ, ``relation`` being the one in which a and b differ; None for the flip set,
    where a and c differ in many attributes."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    d: np.ndarray
    relation: np.ndarray
    second: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.a)

    def subset(self, mask: np.ndarray) -> "Analogies":
        return Analogies(self.a[mask], self.b[mask], self.c[mask], self.d[mask], self.relation[mask],
                         None if self.second is None else self.second[mask])

    def involves(self, attribute: int) -> np.ndarray:
        """Mask of the analogies that flip ``attribute`` (as ``relation``, or as ``second``)."""
        mask = self.relation == attribute
        return mask if self.second is None else mask | (self.second == attribute)


def flip_analogies(K: int, per_relation: int, rng: np.random.Generator,
                   words: np.ndarray | None = None) -> Analogies:
    """Attribute-flip analogies: for relation k, b = a with attribute k flipped, c a word with
    the same value of attribute k as a (c not in {a, b}), d = c flipped. ``words`` restricts all
    four to a sub-vocabulary (pruning); word ids are the model's (bit k = attribute k)."""
    V = 2 ** K
    present = np.zeros(V, bool)
    present[np.arange(V) if words is None else words] = True
    cols = {key: [] for key in ("a", "b", "c", "d", "relation")}
    for k in range(K):
        bit = 1 << k
        base = np.nonzero(present & present[np.arange(V) ^ bit])[0]    # words whose flip is present
        for side in (0, bit):                          # the two values of attribute k
            pool = base[(base & bit) == side]
            if len(pool) < 2:
                continue
            n = per_relation // 2 + (per_relation % 2 if side == 0 else 0)
            a = rng.choice(pool, size=n)
            c = rng.choice(pool, size=n)
            clash = c == a
            while clash.any():                         # c != a (then also c != b, d != b)
                c[clash] = rng.choice(pool, size=int(clash.sum()))
                clash = c == a
            cols["a"].append(a); cols["b"].append(a ^ bit)
            cols["c"].append(c); cols["d"].append(c ^ bit)
            cols["relation"].append(np.full(n, k))
    return Analogies(*(np.concatenate(cols[key]) if cols[key] else np.zeros(0, int)
                       for key in ("a", "b", "c", "d", "relation")))


def pair_analogies(K: int, base_words: int | None = None,
                   rng: np.random.Generator | None = None) -> Analogies:
    """The paper's analogy sets T(k1, k2) (Korchinski et al. 2025, Sec. 6, the text around
    Eq. 13): for attributes k1 != k2 and a base word alpha_0 with alpha_0(k1) = alpha_0(k2) = -1,
    the quadruple a = alpha_0, b = alpha_0 + 2 e_k1, c = alpha_0 + 2 e_k2,
    d = alpha_0 + 2 e_k1 + 2 e_k2 (a : b :: c : d). So a and b differ in k1 only, a and c in k2
    only -- unlike :func:`flip_analogies`, whose c is any word sharing a's value of the relation.

    There are 2^(K-2) base words per pair. T(k1, k2) and T(k2, k1) hold the same quadruples with
    b and c swapped, and both scorings are symmetric in b and c (the target is w_b - w_a + w_c),
    so each unordered pair k1 < k2 is listed once: K (K-1) / 2 * 2^(K-2) analogies, which
    average to what the paper's average over ordered pairs gives. ``base_words`` (None = all)
    keeps a fixed random sample of that many base words per pair, drawn with ``rng``.
    Word ids are the model's (bit k set = attribute k is +1, so alpha_0(k) = -1 is bit k clear)."""
    if K < 2:
        raise ValueError(f"pair analogies need K >= 2 attributes, got K = {K}")
    per_pair = 2 ** (K - 2)
    if base_words is not None:
        if not 1 <= base_words <= per_pair:
            raise ValueError(f"base_words = {base_words}: must be 1..{per_pair} (2^(K-2) for K = {K}) or None (all)")
        if base_words < per_pair and rng is None:
            raise ValueError("base_words below 2^(K-2) samples base words: pass rng")
    ids = np.arange(2 ** K)
    cols = {key: [] for key in ("a", "b", "c", "d", "relation", "second")}
    for k1 in range(K):
        for k2 in range(k1 + 1, K):
            b1, b2 = 1 << k1, 1 << k2
            base = ids[(ids & (b1 | b2)) == 0]
            if base_words is not None and base_words < per_pair:
                base = np.sort(rng.choice(base, size=base_words, replace=False))
            cols["a"].append(base); cols["b"].append(base | b1)
            cols["c"].append(base | b2); cols["d"].append(base | b1 | b2)
            cols["relation"].append(np.full(len(base), k1)); cols["second"].append(np.full(len(base), k2))
    return Analogies(*(np.concatenate(cols[key]) for key in ("a", "b", "c", "d", "relation", "second")))


def _unit(W: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(W, axis=1, keepdims=True)
    return np.divide(W, norm, out=np.zeros_like(W), where=norm > 0)


def predict_hits(W: np.ndarray, q: Analogies, scoring: str, chunk: int = 2048) -> np.ndarray:
    """Boolean hit per analogy under ``scoring`` ('eq13' or '3cosadd'); W is (V, k) or (V', k)
    with word ids indexing its rows. A tie for the top score is a miss."""
    return predict_hits_multi(W, q, (scoring,), chunk)[scoring]


def predict_hits_multi(W: np.ndarray, q: Analogies, scorings=("eq13", "3cosadd"),
                       chunk: int = 2048) -> dict[str, np.ndarray]:
    """:func:`predict_hits` for several scorings from one cosine matrix per chunk (the scorings
    differ only in which candidates they leave out): {scoring: boolean hits}, the same as one
    call per scoring, bit for bit (tests)."""
    for scoring in scorings:
        if scoring not in ("eq13", "3cosadd"):
            raise ValueError(f"scoring must be 'eq13' or '3cosadd', got {scoring!r}")
    Wn = _unit(W)
    hits = {sc: np.zeros(len(q), bool) for sc in scorings}
    for lo in range(0, len(q), chunk):
        sl = slice(lo, lo + chunk)
        a, b, c, d = q.a[sl], q.b[sl], q.c[sl], q.d[sl]
        t = _unit(Wn[b] - Wn[a] + Wn[c])
        sims = t @ Wn.T                                    # (n, V) cosines
        rows = np.arange(len(a))
        target = sims[rows, d].copy()
        sims[rows, d] = -np.inf
        if "eq13" in scorings:                             # a, b and c stay candidates
            hits["eq13"][sl] = target > sims.max(1) + TIE_TOL
        if "3cosadd" in scorings:                          # a, b and c left out (d among them: a miss)
            sims[rows, a] = sims[rows, b] = sims[rows, c] = -np.inf
            gone = (d == a) | (d == b) | (d == c)
            hits["3cosadd"][sl] = np.where(gone, False, target > sims.max(1) + TIE_TOL)
    return hits


def accuracy(W: np.ndarray, q: Analogies, scoring: str) -> float:
    return float(predict_hits(W, q, scoring).mean()) if len(q) else float("nan")


def hits_by_k(spec: Spectrum, q: Analogies, ks: list[int], power: float, scoring: str) -> np.ndarray:
    """Boolean (len(ks), len(q)): hit per analogy for each k, so that subsets (the analogies
    that involve one attribute, those that do not) are read off without scoring again."""
    return hits_by_k_multi(spec, q, ks, power, (scoring,))[scoring]


def hits_by_k_multi(spec: Spectrum, q: Analogies, ks: list[int], power: float,
                    scorings=("eq13", "3cosadd")) -> dict[str, np.ndarray]:
    """:func:`hits_by_k` for several scorings at once: {scoring: (len(ks), len(q)) hits}."""
    if not ks:
        return {sc: np.zeros((0, len(q)), bool) for sc in scorings}
    per_k = [predict_hits_multi(spec.embedding(k, power), q, scorings) for k in ks]
    return {sc: np.stack([h[sc] for h in per_k]) for sc in scorings}


def accuracy_curve(spec: Spectrum, q: Analogies, ks: list[int], power: float,
                   scorings=("eq13", "3cosadd")) -> dict[str, list[float]]:
    """Accuracy for each k in ``ks`` (k <= the spectrum's size), per scoring (NaN with no
    analogy, as :func:`accuracy`)."""
    if not len(q):
        return {sc: [float("nan")] * len(ks) for sc in scorings}
    hits = hits_by_k_multi(spec, q, ks, power, scorings)
    return {sc: [float(h.mean()) for h in hits[sc]] for sc in scorings}


# --------------------------------------------------------------------------------------
# ablations
# --------------------------------------------------------------------------------------
def remove_relation_pairs(counts, K: int, relation: int):
    """A copy of the (dense or sparse) counts with every co-occurrence of the pairs
    (i, i with attribute ``relation`` flipped) set to zero, both directions."""
    C = counts.toarray() if hasattr(counts, "toarray") else np.array(counts, copy=True)
    C[relation_mask(K, relation)] = 0
    return C


def strongest_weakest(p: np.ndarray, s: np.ndarray) -> tuple[int, int]:
    """The attributes of largest and smallest log M coupling gamma_k (the coefficient of
    alpha_ik alpha_jk, :func:`logm_affine`; the paper's attribute eigenvalue is 2^K gamma_k,
    Sec. 6 Result 4): the 'strongest' and 'weakest' semantic directions its Fig. 3c prunes."""
    c2 = logm_affine(p, s)[2]
    return int(np.argmax(c2)), int(np.argmin(c2))


def prune_relation_logm(L: np.ndarray, K: int, relation: int) -> np.ndarray:
    """The paper's removal (Sec. 9): log M'(i, j) = 0 on the 2^(K-1) pairs of words that differ
    in attribute ``relation`` only (2^K cells, both directions), every other cell as in L."""
    out = np.array(L, dtype=float, copy=True)
    out[relation_mask(K, relation)] = 0.0
    return out


def relation_mask(K: int, relation: int) -> np.ndarray:
    """Boolean (V, V) mask of the cells remove_relation_pairs zeroes: (i, i with attribute
    ``relation`` flipped), both directions."""
    V = 2 ** K
    mask = np.zeros((V, V), bool)
    i = np.arange(V)
    mask[i, i ^ (1 << relation)] = True
    return mask


def hard_impute(A: np.ndarray, mask: np.ndarray, rank: int, iters: int = 30) -> np.ndarray:
    """Symmetric A with the cells in ``mask`` treated as missing: start them at 0, then
    ``iters`` times replace them by the best rank-``rank`` (largest |eigenvalue|) approximation's
    values, keeping the observed cells (hard-impute matrix completion, Mazumder et al. 2010)."""
    X = np.array(A, dtype=float, copy=True)
    X[mask] = 0.0
    for _ in range(iters):
        spec = top_spectrum(X, rank)
        X[mask] = ((spec.vectors * spec.values) @ spec.vectors.T)[mask]
    return X


def lognormal_noise(P: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """P(i, j) exp(sigma Z_ij - sigma^2 / 2) with Z symmetric standard normal, renormalised."""
    if sigma == 0:
        return P.copy()
    Z = rng.standard_normal(P.shape)
    Z = np.triu(Z) + np.triu(Z, 1).T
    out = P * np.exp(sigma * Z - sigma ** 2 / 2)
    return out / out.sum()


def sample_counts(P: np.ndarray, pairs: int, rng: np.random.Generator) -> np.ndarray:
    """Symmetric counts of a corpus of about ``pairs`` ordered pairs drawn from the joint P
    (both directions), Poissonised: cell (i, j) ~ Poisson(pairs P(i, j)) independently, which
    is exact for a corpus whose size is itself Poisson(pairs) and costs O(V^2), not O(pairs)."""
    C = rng.poisson(pairs * P / P.sum()).astype(float)
    return C + C.T


def wilson_interval(hits: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (scipy.stats.binomtest)."""
    if n == 0:
        return float("nan"), float("nan")
    from scipy.stats import binomtest

    ci = binomtest(hits, n).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)
