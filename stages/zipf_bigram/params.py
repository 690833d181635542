"""Typed parameters of the zipf_bigram study (one section per step; see params.json)."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

Alpha = Annotated[float, Field(ge=0, le=4)]
Log2D = Annotated[int, Field(ge=2, le=24)]


class PrepareParams(Strict):
    alphas: list[Alpha] = Field(min_length=1, description="Zipf exponents of pi_k ∝ k^-alpha")
    log2_ds: list[Log2D] = Field(min_length=2, description="vocabulary sizes d = 2^k")
    corpus_log2_d: Log2D = Field(description="vocabulary of the sampled token-pair corpora")
    corpus_pairs: int = Field(ge=1000, le=50_000_000, description="token pairs sampled per alpha")
    realtext_vocab: int = Field(ge=16, le=20_000, description="most frequent words kept from lee_background.cor")

    @model_validator(mode="after")
    def _sorted(self) -> "PrepareParams":
        if sorted(set(self.log2_ds)) != list(self.log2_ds):
            raise ValueError(f"log2_ds must be strictly increasing, got {self.log2_ds}")
        return self


class SignGrid(Strict):
    lo: float = Field(gt=0, description="smallest step, in units of q_1 / T")
    hi: float = Field(gt=0, description="largest step, in units of q_1 / T")
    size: int = Field(ge=3, le=2000, description="log-spaced steps tried per budget T")
    budget_ratio: float = Field(gt=1, le=2, description="budgets T are scanned on a geometric grid of this ratio")


class TrainParams(Strict):
    epsilon: float = Field(gt=0, lt=1, description="relative error that defines iterations-to-epsilon")
    sign_grid: SignGrid
    gd_t_max: int = Field(ge=1, description="give up on GD beyond this many iterations")
    sign_t_max: int = Field(ge=1, description="give up on sign descent beyond this many iterations")
    full_model_log2_ds: list[Log2D] = Field(description="d where the full d×d torch model also runs")
    full_model_steps: int = Field(ge=1, le=100_000, description="iterations of each full-model run")
    realtext_steps: int = Field(ge=1, le=100_000, description="iteration budget on real text")
    realtext_sign_lrs: list[Annotated[float, Field(gt=0)]] = Field(min_length=1, description="sign-descent steps tried on real text")
    realtext_adam_lrs: list[Annotated[float, Field(gt=0)]] = Field(min_length=1, description="Adam learning rates tried on real text")


class EvaluateParams(Strict):
    fit_min_log2_d: Log2D = Field(description="fit slopes over d >= 2^k")


class ZipfParams(Strict):
    prepare: PrepareParams
    train: TrainParams
    evaluate: EvaluateParams


PARAMS = ZipfParams
