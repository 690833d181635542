"""Typed parameters of the curriculum_rerm study (see params.json). Sizes are per verdict seed
(``common.seeds``): each seed runs ``replications`` independent draws of every experiment."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict


class LambdaGrid(Strict):
    low: float = Field(gt=0, le=1e3, description="smallest lambda of the sweep")
    high: float = Field(gt=0, le=1e3, description="largest lambda of the sweep")
    points: int = Field(ge=2, le=100, description="log-spaced lambdas from low to high")

    @model_validator(mode="after")
    def _ordered(self) -> "LambdaGrid":
        if self.low >= self.high:
            raise ValueError(f"lambdas.low must be < lambdas.high, got {self.low} >= {self.high}")
        return self


class RidgeParams(Strict):
    dim: int = Field(ge=2, le=2000, description="d, input dimension")
    n_per_task: int = Field(ge=1, le=2000, description="n, samples of every task")
    n_tasks: int = Field(ge=2, le=50, description="T, tasks of a curriculum (the last is the target)")
    replications: int = Field(ge=2, le=10_000, description="independent draws of tasks and data per verdict seed")
    w_norm: float = Field(gt=0, le=1e3, description="||w*||, norm of the target optimum")
    noise: float = Field(ge=0, le=100, description="label noise standard deviation")
    jitter: float = Field(ge=0, le=10, description="good curriculum: random offset of each early optimum "
                                                   "off the line 0 -> w*, as a fraction of the step ||w*|| / T")
    lambdas: LambdaGrid


class SGDParams(Strict):
    lam: float = Field(gt=0, le=1e3, description="lambda of the SGD runs (one value of the sweep's range)")
    step: float = Field(gt=0, le=1, description="constant SGD step")
    epochs: int = Field(ge=1, le=10_000, description="passes over each task's samples")


class DigitsParams(Strict):
    replications: int = Field(ge=2, le=1000, description="independent splits, noise draws and initial weights "
                                                        "per verdict seed")
    per_stage: int = Field(ge=10, le=500, description="training images of each stage")
    n_test: int = Field(ge=50, le=1500, description="test images (target-task noise)")
    noise: float = Field(gt=0, le=5, description="pixel noise std of the target task (pixels in [0, 1])")
    levels: list[Annotated[float, Field(ge=0, le=1)]] = Field(
        min_length=2, max_length=6, description="curriculum noise fractions per stage, increasing, last = 1")
    hidden: list[Annotated[int, Field(ge=1, le=1024)]] = Field(min_length=1, max_length=4,
                                                               description="hidden layer widths")
    lam: float = Field(ge=0, le=10, description="lambda of the bias term (lambda/2)||theta - theta_prev||^2")
    lr: float = Field(gt=0, le=1, description="Adam learning rate")
    steps: int = Field(ge=1, le=20_000, description="full-batch Adam steps per stage")

    @model_validator(mode="after")
    def _levels(self) -> "DigitsParams":
        if list(self.levels) != sorted(self.levels) or self.levels[-1] != 1.0:
            raise ValueError(f"levels must be increasing and end at 1.0 (the target task), got {self.levels}")
        if self.n_test + len(self.levels) * self.per_stage > 1797:
            raise ValueError(f"n_test + len(levels) * per_stage = "
                             f"{self.n_test + len(self.levels) * self.per_stage} exceeds the 1797 digits")
        return self


class TrainParams(Strict):
    ridge: RidgeParams
    sgd: SGDParams
    digits: DigitsParams


class EvaluateParams(Strict):
    ci_level: float = Field(gt=0.5, lt=1, description="confidence level of the paired t-interval")


class CurriculumParams(Strict):
    train: TrainParams
    evaluate: EvaluateParams


PARAMS = CurriculumParams
