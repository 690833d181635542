"""Typed parameters of the coral_diffusion study (stages/coral_diffusion/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from stages.common.runtime.params import Strict


class PrepareStep(Strict):
    test_per_class: int = Field(ge=5, le=60, description="held-out real images a class (balanced test set)")
    n_max: int = Field(ge=10, le=170, description="training images of the largest class (class 0)")
    ratio: float = Field(ge=1, le=100, description="imbalance ratio: largest over smallest class count (exponential profile)")
    classifier_hidden: int = Field(ge=8, le=512, description="hidden units of the real-data MLP classifier (its features are the Fréchet space)")

    @model_validator(mode="after")
    def _fits(self) -> "PrepareStep":
        if self.test_per_class + self.n_max > 174:      # the smallest digit class has 174 images
            raise ValueError(f"test_per_class + n_max = {self.test_per_class + self.n_max} exceeds 174, the "
                             f"smallest class's image count in load_digits")
        if self.n_max / self.ratio < 2:
            raise ValueError(f"n_max / ratio = {self.n_max / self.ratio:.2f}: the rarest class needs >= 2 images")
        return self


class TrainStep(Strict):
    T: int = Field(ge=10, le=1000, description="diffusion steps")
    hidden: int = Field(ge=16, le=1024, description="width of the first U-Net block (the second is half)")
    bottleneck: int = Field(ge=4, le=256, description="bottleneck units (where the latent overlap is measured)")
    proj: int = Field(ge=4, le=256, description="output size of CORAL's projection head")
    label_init: float = Field(gt=0, le=1, description="std of the class embedding at initialisation")
    class_in_encoder: bool = Field(description="the class embedding also enters the down blocks and the bottleneck (the paper's U-Net) or only the up blocks")
    steps: int = Field(ge=1, description="Adam steps per model")
    batch: int = Field(ge=8, le=4096, description="images per step")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate")
    coral_weight: float = Field(gt=0, le=10, description="weight of the supervised contrastive term (the CORAL model)")
    temperature: float = Field(gt=0, le=10, description="SupCon temperature")
    time_scale: float = Field(gt=0, le=10, description="time-aware scaling: weight x mean exp((1 - t/T) / time_scale)")


class EvaluateStep(Strict):
    head: list[int] = Field(min_length=1, description="head classes (most images)")
    tail: list[int] = Field(min_length=1, description="tail classes (fewest images)")
    per_class: int = Field(ge=5, le=5000, description="generated images a class and model")
    sample_steps: int = Field(ge=1, description="DDIM steps (T = ancestral DDPM)")
    t_overlap: float = Field(ge=0, le=1, description="noise level t/T at which the claim's overlap is read (the authors' encodings use 0.1)")
    t_fracs: list[float] = Field(min_length=1, description="further noise levels t/T for the overlap profile (context)")
    k: int = Field(ge=1, le=50, description="neighbours in the latent overlap")
    coverage_k: int = Field(ge=1, le=50, description="neighbours of the coverage radius")

    @field_validator("head", "tail")
    @classmethod
    def _classes(cls, v: list[int]) -> list[int]:
        if any(c < 0 or c > 9 for c in v) or len(set(v)) != len(v):
            raise ValueError(f"classes must be distinct digits 0..9, got {v}")
        return v

    @field_validator("t_fracs")
    @classmethod
    def _fracs(cls, v: list[float]) -> list[float]:
        if any(not 0 <= f <= 1 for f in v):
            raise ValueError(f"t_fracs must lie in [0, 1], got {v}")
        return v

    @model_validator(mode="after")
    def _disjoint(self) -> "EvaluateStep":
        if set(self.head) & set(self.tail):
            raise ValueError(f"head {self.head} and tail {self.tail} must not share classes")
        return self


class CoralDiffusionParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep

    @model_validator(mode="after")
    def _steps(self) -> "CoralDiffusionParams":
        if self.evaluate.sample_steps > self.train.T:
            raise ValueError(f"evaluate.sample_steps ({self.evaluate.sample_steps}) must be <= train.T ({self.train.T})")
        if self.evaluate.k >= 10 * self.prepare.test_per_class:
            raise ValueError(f"evaluate.k ({self.evaluate.k}) must be < the test set's size "
                             f"{10 * self.prepare.test_per_class}")
        return self


PARAMS = CoralDiffusionParams
