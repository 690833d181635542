"""Typed parameters of the bitmark study (stages/bitmark/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from stages.common.runtime.params import Strict


def _increasing(name: str, v: list[float], low: float) -> list[float]:
    if any(b <= a for a, b in zip(v, v[1:])) or v[0] <= low:
        raise ValueError(f"{name} must be strictly increasing and > {low}, got {v}")
    return v


class PrepareStep(Strict):
    test_fraction: float = Field(gt=0.05, lt=0.5, description="share of the 1797 digits held out (stratified) for quality")


class WatermarkParams(Strict):
    ngram: int = Field(ge=1, le=12, description="n of the bit n-grams: the green bit depends on the n-1 previous bits")
    key: int = Field(ge=0, description="the secret key of the green table")
    delta: float = Field(gt=0, le=10, description="the chosen bias on the green bit's logit (the must checks use it)")


class TrainStep(Strict):
    hidden: int = Field(ge=4, le=4096, description="hidden units per layer of the MADE")
    layers: int = Field(ge=1, le=4, description="hidden layers of the MADE")
    steps: int = Field(ge=1, description="Adam steps of the clean model on the real digits")
    batch: int = Field(ge=2, description="sequences per step")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate")
    weight_decay: float = Field(ge=0, lt=1, description="Adam weight decay")
    finetune_wm: int = Field(ge=10, description="BitMark samples of the clean model in the radioactive model's fine-tuning set (the control gets as many unwatermarked samples instead)")
    finetune_real: int = Field(ge=0, description="real training digits mixed into both fine-tuning sets (the rest of the mix)")
    finetune_steps: int = Field(ge=1, description="Adam steps of each fine-tune of the clean model (radioactive, control)")
    finetune_lr: float = Field(gt=0, lt=1, description="Adam learning rate of the fine-tunes")


class EvaluateStep(Strict):
    n_samples: int = Field(ge=20, description="samples per condition (clean, each delta, second models), classes balanced")
    deltas: list[float] = Field(min_length=2, description="the delta sweep, increasing; contains watermark.delta")
    classifier_hidden: int = Field(ge=4, le=512, description="hidden units of the digit classifier (its features give the Fréchet distance)")
    classifier_iters: int = Field(ge=10, le=5000, description="training epochs (max_iter) of the digit classifier")
    fpr: float = Field(gt=0, lt=0.5, description="false-positive rate for the TPR figures (detection and radioactivity)")
    token_delta_matched: float = Field(gt=0, le=20, description="delta of the token-level baseline at the quality cost of BitMark at watermark.delta (chosen on calibration seeds)")
    null_sims: int = Field(ge=100, description="rows of uniform random bits for the detector's null distribution")
    bitflip: list[float] = Field(min_length=1, description="bit-flip probabilities, increasing")
    noise: list[float] = Field(min_length=1, description="pixel noise standard deviations in levels (0..15), increasing")
    blur: list[float] = Field(min_length=1, description="Gaussian blur sigmas in pixels, increasing")

    @field_validator("deltas")
    @classmethod
    def _deltas(cls, v: list[float]) -> list[float]:
        return _increasing("deltas", v, 0.0)

    @field_validator("bitflip")
    @classmethod
    def _flips(cls, v: list[float]) -> list[float]:
        if v[-1] > 0.5:
            raise ValueError(f"bitflip probabilities must be <= 0.5, got {v}")
        return _increasing("bitflip", v, 0.0)

    @field_validator("noise", "blur")
    @classmethod
    def _strengths(cls, v: list[float]) -> list[float]:
        return _increasing("attack strengths", v, 0.0)


class BitmarkParams(Strict):
    prepare: PrepareStep
    watermark: WatermarkParams
    train: TrainStep
    evaluate: EvaluateStep

    @model_validator(mode="after")
    def _chosen_delta_swept(self) -> "BitmarkParams":
        if self.watermark.delta not in self.evaluate.deltas:
            raise ValueError(f"watermark.delta ({self.watermark.delta}) must be one of evaluate.deltas {self.evaluate.deltas}")
        return self


PARAMS = BitmarkParams
