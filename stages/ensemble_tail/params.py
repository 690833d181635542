"""Typed parameters of the ensemble_tail study (see params.json, section ensemble_tail)."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

Pos = Annotated[float, Field(ge=0, le=1e6)]


def _check_grid(grid: list[int]) -> None:
    if sorted(set(grid)) != list(grid):
        raise ValueError(f"n_grid must be strictly increasing, got {grid}")


class Ensembles(Strict):
    k: int = Field(ge=1, le=100_000, description="MoVE subsample size")
    B: int = Field(ge=1, le=100_000, description="MoVE subsamples (also the bagging-average's)")
    k1: int = Field(ge=1, le=100_000, description="ROVE phase-I (candidate retrieval) subsample size")
    k2: int = Field(ge=1, le=100_000, description="ROVE phase-II (voting) subsample size")
    B1: int = Field(ge=1, le=100_000, description="ROVE phase-I subsamples")
    B2: int = Field(ge=1, le=100_000, description="ROVE phase-II subsamples")
    auto_epsilon_prob: float = Field(gt=0, le=1, description="ROVE's automatic epsilon: smallest epsilon at which "
                                     "some candidate is epsilon-optimal on this share of phase-II subsamples")
    roves: bool = Field(description="also run ROVEs (ROVE with the data split in halves)")
    bag_fraction: float = Field(gt=0, le=1, description="the tuned bagging-average (the musts' control): its "
                                "subsample size is round(bag_fraction x n), at least k (chosen on calibration seeds)")
    bag_B: int = Field(ge=1, le=100_000, description="the tuned bagging-average's subsamples")


class LPProblem(Strict):
    costs: list[Pos] = Field(min_length=2, max_length=100, description="expected cost of each simplex vertex")
    tail_index: float = Field(gt=1, le=10, description="Pareto tail index of the noise (> 1: finite mean)")
    threshold: float = Field(gt=0, description="tail event: excess risk > threshold")

    @model_validator(mode="after")
    def _unique_optimum(self) -> "LPProblem":
        c = sorted(self.costs)
        if c[1] - c[0] <= self.threshold:
            raise ValueError(f"costs must have a unique optimum with every other vertex's excess > threshold "
                             f"{self.threshold}, got {self.costs}")
        return self


class RegressionProblem(Strict):
    enabled: bool = Field(description="run the regression model-selection problem (a should-row)")
    dim: int = Field(ge=1, le=100, description="feature dimension d")
    sq_dists: list[Pos] = Field(min_length=2, max_length=50, description="||b_j - beta||^2 of the candidate "
                                "models (one must be 0: the true model)")
    tail_index: float = Field(gt=2, le=10, description="Pareto tail index of the noise (> 2: finite risk)")
    threshold: float = Field(gt=0, description="tail event: excess risk > threshold")
    n_grid: list[Annotated[int, Field(ge=2, le=1_000_000)]] = Field(min_length=2, description="sample sizes")
    replications: int = Field(ge=10, le=1_000_000, description="independent data sets per sample size")

    @model_validator(mode="after")
    def _truth_present(self) -> "RegressionProblem":
        if min(self.sq_dists) != 0:
            raise ValueError(f"sq_dists must contain 0 (the true model), got {self.sq_dists}")
        _check_grid(self.n_grid)
        return self


class TrainParams(Strict):
    lp: LPProblem
    regression: RegressionProblem
    n_grid: list[Annotated[int, Field(ge=2, le=1_000_000)]] = Field(min_length=3, description="sample sizes "
                                                                    "of the LP sweep (log-spaced)")
    replications: int = Field(ge=10, le=1_000_000, description="independent data sets per sample size")
    chunk: int = Field(ge=1, le=100_000, description="replications simulated at once (memory; results depend "
                                                      "on it only through the random streams)")
    ensembles: Ensembles

    @model_validator(mode="after")
    def _sizes(self) -> "TrainParams":
        _check_grid(self.n_grid)
        e = self.ensembles
        small = min(self.n_grid[0], self.regression.n_grid[0] if self.regression.enabled else self.n_grid[0])
        need = max(e.k, e.k1, e.k2) * (2 if e.roves else 1)
        if small < need:
            raise ValueError(f"the smallest n ({small}) must be >= the largest subsample size"
                             f"{' x 2 (ROVEs splits the data)' if e.roves else ''} = {need}")
        return self


class EvaluateParams(Strict):
    min_events: int = Field(ge=1, le=10_000, description="fit a vote's log tail only where it has >= this many events")
    compare_n: int = Field(ge=2, description="sample size of the vote-vs-base tail comparison (must be in n_grid)")
    n_boot: int = Field(ge=100, le=100_000, description="binomial bootstrap resamples of each slope interval")
    ci_level: float = Field(gt=0.5, lt=1, description="confidence level of intervals and of the upper bound")


class EnsembleTailParams(Strict):
    train: TrainParams
    evaluate: EvaluateParams

    @model_validator(mode="after")
    def _compare_in_grid(self) -> "EnsembleTailParams":
        if self.evaluate.compare_n not in self.train.n_grid:
            raise ValueError(f"evaluate.compare_n = {self.evaluate.compare_n} must be one of train.n_grid "
                             f"{self.train.n_grid}")
        return self


PARAMS = EnsembleTailParams
