"""Typed parameters of the mnl_assortment study (one section per step; see params.json)."""
from __future__ import annotations

from math import comb
from typing import Annotated, Literal

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

Radius = Annotated[float, Field(gt=0, le=6)]
SampleSize = Annotated[int, Field(ge=10, le=1_000_000)]


class PrepareParams(Strict):
    online_task: Literal["canonical", "fresh"] = Field(description="online problem: 'fresh' (the study's: N fresh "
                                                      "items a round with features in the unit ball of R^dim) or "
                                                      "'canonical' (a fixed catalogue of N items with one-hot "
                                                      "features, d = N, utilities theta*_i uniform in [-B, B]; "
                                                      "tried in calibration)")
    n_items: int = Field(ge=2, le=30, description="N, items on show each round (online) / in the offline instance")
    capacity: int = Field(ge=1, le=8, description="K, the most items an assortment may hold")
    dim: int = Field(ge=1, le=50, description="d, feature dimension of the offline problems and of the 'fresh' online "
                                              "task (features uniform in the unit ball)")
    revenue_low: float = Field(gt=0, le=10, description="revenues are uniform in [revenue_low, revenue_high]")
    revenue_high: float = Field(gt=0, le=10, description="revenues are uniform in [revenue_low, revenue_high]")
    radii: list[Radius] = Field(min_length=1, max_length=10, description="B, the utility bound of the true parameter "
                                "(online canonical: |theta*_i| <= B; offline and fresh: ||theta*|| = B; strictly "
                                "increasing); kappa^-1 grows like e^{3B} with them")
    horizon: int = Field(ge=50, le=100_000, description="T, rounds of every online run")
    runs: int = Field(ge=2, le=1000, description="online runs per verdict seed, radius and arm (each its own theta*, "
                                                 "revenues and choices; every arm and radius of a run meets the "
                                                 "same ones); a seed's figures are read off its runs")
    offline_instances: int = Field(ge=1, le=1000, description="offline problems per radius (items, theta*, "
                                                              "behaviour assortment)")
    offline_reps: int = Field(ge=1, le=10_000, description="logged data sets per offline instance")
    offline_n: list[SampleSize] = Field(min_length=2, description="logged sample sizes n of the offline sweep "
                                        "(strictly increasing; the smaller data sets are prefixes of the largest)")
    behaviour_explore: float = Field(gt=0, lt=1, description="the behaviour policy shows its habitual assortment "
                                     "(fixed, never optimal) w.p. 1 - this, else a uniform full assortment")
    highs_tolerance: float = Field(gt=0, le=1e-3, description="prepare stops if an enumerated optimum differs from "
                                   "the HiGHS LP of Davis, Gallego & Topaloglu by more (HiGHS's feasibility "
                                   "tolerance is 1e-7)")

    @model_validator(mode="after")
    def _consistent(self) -> "PrepareParams":
        if self.capacity > self.n_items:
            raise ValueError(f"capacity must be <= n_items, got capacity={self.capacity}, n_items={self.n_items}")
        if sum(comb(self.n_items, k) for k in range(1, self.capacity + 1)) > 20_000:
            raise ValueError(f"n_items={self.n_items}, capacity={self.capacity} gives more than 20000 "
                             f"assortments to enumerate")
        if self.revenue_low >= self.revenue_high:
            raise ValueError(f"revenue_low must be < revenue_high, got {self.revenue_low} >= {self.revenue_high}")
        for key in ("radii", "offline_n"):
            v = getattr(self, key)
            if sorted(set(v)) != list(v):
                raise ValueError(f"{key} must be strictly increasing, got {v}")
        if self.online_task == "canonical" and self.n_items > 12:
            raise ValueError(f"the canonical online task has d = n_items; n_items must be <= 12, got {self.n_items}")
        return self


class TrainParams(Strict):
    ridge: float = Field(gt=0, le=100, description="lambda of the ridge MLE (lambda/2 ||theta||^2) and of the "
                                                   "lambda I added to the Hessian and to the Gram matrix")
    refit_growth: float = Field(ge=1.0, le=2.0, description="the MLE is refitted at rounds t_{k+1} = "
                                "max(t_k + 1, ceil(growth t_k)) and at T (1.0 = every round)")
    newton_tol: float = Field(gt=0, le=1e-2, description="Newton stops when every run's gradient norm is below this")
    newton_max_iter: int = Field(ge=1, le=500, description="Newton iterations at most per refit")
    pessimism_delta: float = Field(gt=0, lt=1, description="new-region pessimism: LCB = R - sqrt(2 log(M / delta)) "
                                   "||grad R||_{H^-1} (a union bound over the M assortments)")
    scipy_check_online: int = Field(ge=0, le=1000, description="per verdict seed, the final online estimates of "
                                    "runs 0..this-1 of every arm and radius are refitted with scipy.optimize.minimize "
                                    "as a cross-check")
    scipy_check_offline: int = Field(ge=0, le=100_000, description="per verdict seed, offline MLEs (first "
                                     "replications) refitted with scipy.optimize.minimize as a cross-check")
    mle_tolerance: float = Field(gt=0, le=1e-2, description="train stops if a batched Newton estimate differs from "
                                 "scipy's by more (two optimisers stopping at gradient norms <= 1e-7)")


class EvaluateParams(Strict):
    fit_from: float = Field(gt=0, lt=1, description="the regret slope is fitted on log-spaced t in "
                                                    "[fit_from T, T]")
    fit_points: int = Field(ge=3, le=200, description="log-spaced checkpoints of the slope fit")
    n_boot: int = Field(ge=100, le=100_000, description="bootstrap resamples (over seeds) of every interval")
    ci_level: float = Field(gt=0.5, lt=1, description="confidence level of the intervals")


class MnlAssortmentParams(Strict):
    prepare: PrepareParams
    train: TrainParams
    evaluate: EvaluateParams


PARAMS = MnlAssortmentParams
