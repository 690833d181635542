"""Typed parameters of the t2mir study (stages/t2mir/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, model_validator

from stages.common.params import Strict


class PrepareStep(Strict):
    n_train: int = Field(ge=10, description="training examples")
    n_test: int = Field(ge=10, description="test examples")
    dim: int = Field(ge=1, le=10_000, description="input dimension")
    noise: float = Field(ge=0, description="standard deviation of the label noise")


class TrainStep(Strict):
    lambdas: list[float] = Field(min_length=1, description="ridge penalties to fit, increasing")

    @model_validator(mode="after")
    def _increasing(self) -> "TrainStep":
        if any(b <= a for a, b in zip(self.lambdas, self.lambdas[1:])) or self.lambdas[0] < 0:
            raise ValueError(f"lambdas must be >= 0 and strictly increasing, got {self.lambdas}")
        return self


class EvaluateStep(Strict):
    baseline_lambda: float = Field(ge=0, description="the penalty of the baseline fit (one of train.lambdas)")


class T2mirParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep

    @model_validator(mode="after")
    def _baseline_is_fitted(self) -> "T2mirParams":
        if self.evaluate.baseline_lambda not in self.train.lambdas:
            raise ValueError(f"evaluate.baseline_lambda ({self.evaluate.baseline_lambda}) must be one of "
                             f"train.lambdas {self.train.lambdas}")
        return self


PARAMS = T2mirParams
