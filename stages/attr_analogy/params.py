"""Typed parameters of the attr_analogy study (one section per step; see params.json).

The corpora themselves (K, marginals p_k, strengths s_k, pairs) are the
``corpora.<profile>.attributes`` entries, read back from each corpus's truth.json; this study
names which corpora it uses.
"""
from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

CorpusName = Annotated[str, Field(pattern=r"^[a-z0-9_]+$")]
PosInt = Annotated[int, Field(ge=1)]


def _increasing(values: list, key: str) -> None:
    if sorted(set(values)) != list(values):
        raise ValueError(f"{key} must be strictly increasing, got {values}")


class NoiseParams(Strict):
    spread: CorpusName = Field(description="corpus whose exact model (truth.json) the noise sweep perturbs")
    sigmas: list[Annotated[float, Field(ge=0, le=5)]] = Field(
        min_length=1, description="log-normal noise on P(i,j): P exp(sigma Z - sigma^2/2), Z symmetric N(0,1)")
    keep: list[Annotated[float, Field(gt=0, le=1)]] = Field(
        min_length=1, description="vocabulary pruning: fraction of the 2^K words kept (at random)")
    pairs: list[Annotated[int, Field(ge=1000, le=1_000_000_000)]] = Field(
        min_length=1, description="corpus-size noise: counts of this many pairs drawn from the exact P")

    @model_validator(mode="after")
    def _sorted(self) -> "NoiseParams":
        _increasing(self.sigmas, "sigmas")
        if len(set(self.keep)) != len(self.keep):
            raise ValueError(f"keep must hold distinct fractions, got {self.keep}")
        _increasing(self.pairs, "pairs")
        return self


class RealTextParams(Strict):
    ks: list[Annotated[int, Field(ge=1, le=2000)]] = Field(min_length=1, description="embedding sizes k tried on real text")
    eig_tol: float = Field(gt=0, lt=1e-2, description="ARPACK relative tolerance of the sparse eigensolver")

    @model_validator(mode="after")
    def _sorted(self) -> "RealTextParams":
        _increasing(self.ks, "ks")
        return self


class TrainParams(Strict):
    spreads: list[CorpusName] = Field(min_length=1, description="attribute corpora (narrow and broad s_k spreads): exact model + sampled counts")
    saturation_corpus: CorpusName = Field(description="the sampled corpus the saturation check (ii) reads")
    removal_corpus: CorpusName = Field(description="smaller sampled corpus of the pair-removal ablation (iv)")
    analogies_per_relation: int = Field(ge=10, le=100_000, description="attribute-flip analogies drawn per attribute")
    analogy_seed: int = Field(
        ge=0, description="data seed of the analogy sets (the attribute flips; the paper profile's "
                                  "sample of T(k1, k2) base words): fixed data, the same for every verdict seed")
    pair_base_words: PosInt | None = Field(
        description="the paper's analogy sets T(k1, k2) (Sec. 6): base words per attribute pair, a fixed "
                    "random sample; null = all 2^(K-2) (checked against K when the corpora are read)")
    k_max: int = Field(ge=2, le=4096, description="k sweep covers every k = 1..k_max (must be >= 3K)")
    k_extra: list[PosInt] = Field(description="larger k also evaluated (M's decline)")
    power: float = Field(ge=0, le=1, description="embedding W = V_k |Lambda_k|^power")
    pseudocount: float = Field(ge=0, le=10, description="added to every count cell before M-hat and log M-hat (0.5: Haldane-Anscombe)")
    removal_relations: list[Annotated[int, Field(ge=0, le=13)]] = Field(
        min_length=1, description="attributes whose flip pairs are removed, one ablation each")
    noise: NoiseParams
    realtext: RealTextParams

    @model_validator(mode="after")
    def _checks(self) -> "TrainParams":
        _increasing(self.k_extra, "k_extra")
        if self.k_extra and self.k_extra[0] <= self.k_max:
            raise ValueError(f"k_extra must lie above k_max ({self.k_max}), got {self.k_extra}")
        _increasing(self.removal_relations, "removal_relations")
        if len(set(self.spreads)) != len(self.spreads):
            raise ValueError(f"spreads must be distinct corpus names, got {self.spreads}")
        if self.saturation_corpus not in self.spreads:
            raise ValueError(f"saturation_corpus ({self.saturation_corpus!r}) must be one of spreads {self.spreads}")
        if self.noise.spread not in self.spreads:
            raise ValueError(f"noise.spread ({self.noise.spread!r}) must be one of spreads {self.spreads}")
        return self


class EvaluateParams(Strict):
    ci_level: float = Field(gt=0.5, lt=1, description="confidence level of the Wilson intervals on real text")
    k_report: int = Field(ge=1, le=2000, description="real text: the k whose accuracy and interval the ledger reports (one of train.realtext.ks)")


class AttrParams(Strict):
    train: TrainParams
    evaluate: EvaluateParams

    @model_validator(mode="after")
    def _report_in_ks(self) -> "AttrParams":
        if self.evaluate.k_report not in self.train.realtext.ks:
            raise ValueError(f"evaluate.k_report ({self.evaluate.k_report}) must be one of "
                             f"train.realtext.ks {self.train.realtext.ks}")
        return self


PARAMS = AttrParams
