"""The binary-attribute co-occurrence model (Korchinski, Karkada, Bahri, Wyart 2025).

K binary attributes; word i is the sign vector alpha_i in {-1,+1}^K (all 2^K of them; word
id i has attribute k = +1 when bit k of i is set). A co-occurring pair (i, j) is drawn one
attribute at a time: for attribute k, (alpha_ik, alpha_jk) ~ Q_k, a symmetric 2x2 joint with
marginals (p_k, 1 - p_k) and correlation strength s_k in [0, 1):

    Q_k = [[p^2 + c, p q - c], [p q - c, q^2 + c]],   p = p_k, q = 1 - p_k, c = s_k p q.

So P(i, j) = prod_k Q_k(alpha_ik, alpha_jk), P(i) = prod_k p_k^[alpha_ik = +1] q_k^[alpha_ik = -1],
and M(i, j) = P(i, j) / (P(i) P(j)) is the Kronecker product of the 2x2 factors
Q_k(a, b) / (P_k(a) P_k(b)). Sampling a pair costs O(K), never the 2^K x 2^K joint.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field, model_validator

from stages.common.base import Strict

from . import GeneratedCorpus

Range = Annotated[list[Annotated[float, Field(ge=0)]], Field(min_length=2, max_length=2)]


class AttributeCorpusParams(Strict):
    name: str = Field(pattern=r"^[a-z0-9_]+$", description="folder name under data/corpora/attributes/")
    attributes: int = Field(ge=2, le=14, description="K, the number of binary attributes (vocabulary 2^K)")
    marginal: Range = Field(description="[lo, hi]: p_k, P(attribute k = +1), evenly spaced over this range")
    strength: Range = Field(description="[lo, hi]: s_k in [0, 1), evenly spaced (narrow or broad spread)")
    pairs: int = Field(ge=1000, le=100_000_000, description="co-occurring word pairs sampled")

    @model_validator(mode="after")
    def _ranges(self) -> "AttributeCorpusParams":
        lo, hi = self.marginal
        if not 0 < lo <= hi < 1:
            raise ValueError(f"marginal must satisfy 0 < lo <= hi < 1, got {self.marginal}")
        lo, hi = self.strength
        if not 0 <= lo <= hi < 1:
            raise ValueError(f"strength must satisfy 0 <= lo <= hi < 1, got {self.strength}")
        return self


def signs(K: int) -> np.ndarray:
    """alpha, shape (2^K, K): alpha[i, k] = +1 if bit k of i is set else -1."""
    ids = np.arange(2 ** K)[:, None]
    return np.where((ids >> np.arange(K)) & 1, 1, -1).astype(np.int8)


def factors(p: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Q, shape (K, 2, 2): Q[k, a, b] with index 0 = attribute +1, 1 = attribute -1."""
    q = 1 - p
    c = s * p * q
    return np.stack([np.stack([p * p + c, p * q - c], -1), np.stack([p * q - c, q * q + c], -1)], -2)


def spaced(lo_hi: list[float], K: int) -> np.ndarray:
    lo, hi = lo_hi
    return np.linspace(lo, hi, K) if K > 1 else np.array([lo])


def sample_pairs(Q: np.ndarray, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n pairs (i, j) from P(i, j) = prod_k Q_k(alpha_ik, alpha_jk)."""
    K = Q.shape[0]
    i = np.zeros(n, dtype=np.int64)
    j = np.zeros(n, dtype=np.int64)
    for k in range(K):
        cell = rng.choice(4, size=n, p=Q[k].reshape(-1))       # 0:(+,+) 1:(+,-) 2:(-,+) 3:(-,-)
        i |= (cell < 2).astype(np.int64) << k
        j |= (cell % 2 == 0).astype(np.int64) << k
    return i, j


def vocab_names(K: int) -> list[str]:
    """w + the attribute bits, most significant first (``w0101`` has attributes 0 and 2 set)."""
    return [f"w{i:0{K}b}" for i in range(2 ** K)]


def generate(params: AttributeCorpusParams, seed: int) -> GeneratedCorpus:
    import scipy.sparse as sp

    K = params.attributes
    p, s = spaced(params.marginal, K), spaced(params.strength, K)
    rng = np.random.default_rng([seed, K, params.pairs])
    i, j = sample_pairs(factors(p, s), params.pairs, rng)
    V = 2 ** K
    counts = sp.coo_matrix((np.ones(len(i), dtype=np.int64), (i, j)), shape=(V, V)).tocsr()
    return GeneratedCorpus(
        name=params.name, kind="attributes", vocab=vocab_names(K),
        sentences=np.stack([i, j], 1), counts=(counts + counts.T).tocsr(),
        word_truth={"attributes": signs(K).tolist()},
        truth={"attributes": K, "marginal": p, "strength": s, "pairs": params.pairs, "seed": seed,
               "window": 1})
