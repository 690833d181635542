"""Typed parameters of the w2v_quartic study (one section per step; see params.json)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

ROLES = ("dynamics", "downstream", "downstream_rich", "realtext")   # the train section's corpora, in run order


class RunParams(Strict):
    """One corpus, trained by SGNS and by its quartic approximation with these same settings."""

    source: Literal["topics", "realtext"] = Field(description="corpus family (data/corpora/<source>)")
    corpus: str = Field(pattern=r"^[a-z0-9_]+$",
                        description="corpus folder under data/corpora/topics/ (ignored for realtext)")
    max_vocab: int = Field(ge=0, le=20_000, description="keep the most frequent words (0 = all)")
    dim: int = Field(ge=1, le=1000, description="embedding dimension d (tied embeddings W: V x d)")
    init_scale: float = Field(gt=0, le=1, description="W(0) entries ~ N(0, init_scale^2 / d)")
    lr_scale: float = Field(gt=0, le=1.9,
                            description="step = lr_scale / max|eig(M*)| (full-batch gradient descent)")
    steps: int = Field(ge=1, le=1_000_000, description="full-batch steps (both models)")
    log_every: int = Field(ge=1, le=100_000, description="record sigma_k^2, projections, overlap every n steps")
    track_extra: int = Field(ge=0, le=100, description="eigendirections tracked beyond the top d")
    gensim_seeds: int = Field(ge=1, le=50, description="gensim Word2Vec runs (seeds) on this corpus")

    @model_validator(mode="after")
    def _consistent(self) -> "RunParams":
        if self.max_vocab and self.max_vocab < self.dim:
            raise ValueError(f"max_vocab ({self.max_vocab}) must be 0 (all) or at least dim ({self.dim})")
        if self.log_every > self.steps:
            raise ValueError(f"log_every ({self.log_every}) must be at most steps ({self.steps})")
        return self


class GensimParams(Strict):
    """gensim Word2Vec (skip-gram with negative sampling), the baseline; window = the corpus's."""

    epochs: int = Field(ge=1, le=1000, description="passes over the token file")
    negative: int = Field(ge=1, le=50, description="negative samples per positive pair")
    ns_exponent: float = Field(ge=0, le=1, description="negatives drawn from unigram^ns_exponent")
    sample: float = Field(ge=0, le=1, description="subsampling threshold of frequent words (0 = off)")
    alpha: float = Field(gt=0, le=1, description="initial learning rate (decays linearly)")


class Word2VecWeightsParams(Strict):
    """The quartic model (and full-batch SGNS) with word2vec's own pair weights (the paper's
    Proposition 2; the official code's ``reweight = "sgns"``), with the baseline's subsampling,
    negative distribution and number of negatives (``gensim``) and a weighted window, on the
    roles listed. A weighted factorisation: no closed form, so it is trained to convergence."""

    roles: list[Literal["dynamics", "downstream", "downstream_rich", "realtext"]] = Field(
        description="corpora on which it is trained (none: [])")
    kinds: list[Literal["quartic", "sgns"]] = Field(min_length=1, description="losses trained with these weights")
    window_weighting: Literal["uniform", "linear"] = Field(
        description="a pair at distance j weighs (window + 1 - j) / window (linear: word2vec's dynamic window, "
                    "the official code's (L + 1 - j)) or 1 (uniform)")
    lr_scale: float = Field(gt=0, le=1.9, description="step = lr_scale / max|eig(G o M*)|")
    steps: int = Field(ge=1, le=1_000_000, description="full-batch steps")
    log_every: int = Field(ge=1, le=100_000, description="record sigma_k^2, projections, overlap every n steps")

    @model_validator(mode="after")
    def _consistent(self) -> "Word2VecWeightsParams":
        if len(set(self.roles)) != len(self.roles) or len(set(self.kinds)) != len(self.kinds):
            raise ValueError(f"roles {self.roles} and kinds {self.kinds} must not repeat an entry")
        if self.log_every > self.steps:
            raise ValueError(f"log_every ({self.log_every}) must be at most steps ({self.steps})")
        return self


class TrainParams(Strict):
    dynamics: RunParams = Field(description="the corpus for the learning dynamics (plateaus, overlap, times)")
    downstream: RunParams = Field(description="a downstream score on sparse counts (overlapping topics, reported)")
    downstream_rich: RunParams = Field(description="the checked downstream score: more documents, overlap "
                                                   "raised until gensim is below its ceiling")
    realtext: RunParams = Field(description="real text (lee_background), reported as a proxy")
    gensim: GensimParams
    word2vec_weights: Word2VecWeightsParams = Field(
        description="the quartic model with word2vec's own pair weights (issue 20), reported beside the "
                    "omniscient one")

    @model_validator(mode="after")
    def _spread(self) -> "TrainParams":
        if self.downstream.gensim_seeds < 2:
            raise ValueError("downstream.gensim_seeds must be at least 2 (the check uses gensim's "
                             f"seed-to-seed spread), got {self.downstream.gensim_seeds}")
        return self


class EvaluateParams(Strict):
    rank_threshold: float = Field(gt=0, lt=1, description="direction k counts as learned once sigma_k^2 "
                                  ">= this share of its final value")
    min_rel_gap: float = Field(ge=0, lt=1, description="a rank level counts for plateaus only when "
                               "(lambda_r - lambda_r+1) / lambda_r >= this")
    plateau_min_frac: float = Field(ge=0, lt=1, description="a plateau lasts at least this share of the "
                                    "time the rank takes to reach its final value")
    retrieval_k: int = Field(ge=1, le=1000, description="neighbours in the retrieval score (precision@k)")
    tolerance_abs: float = Field(ge=0, le=1, description="|quartic - gensim| allowed: max(tolerance_abs, "
                                 "tolerance_spread_multiple x gensim's seed-to-seed std) (STUDIES.md)")
    tolerance_spread_multiple: float = Field(ge=0, le=10, description="see tolerance_abs")


class W2VParams(Strict):
    train: TrainParams
    evaluate: EvaluateParams


PARAMS = W2VParams
