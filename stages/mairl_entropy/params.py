"""Typed parameters of the mairl_entropy study (one section per step; see params.json)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

PositiveTau = Annotated[float, Field(gt=0, le=100)]


class PrepareParams(Strict):
    n_games: int = Field(ge=1, le=1000, description="random general-sum Markov games to generate")
    n_states: int = Field(ge=1, le=50, description="states of every game")
    n_actions: list[Annotated[int, Field(ge=2, le=10)]] = Field(
        min_length=2, max_length=2, description="actions of player 1 and player 2")
    gamma: float = Field(ge=0, lt=1, description="discount factor")
    reward_low: float = Field(ge=-100, le=100, description="rewards are uniform on [reward_low, reward_high]")
    reward_high: float = Field(ge=-100, le=100, description="upper end of the reward range")
    transition_concentration: float = Field(gt=0, le=100, description="Dirichlet concentration of "
                                            "every P(.|s, a1, a2) (1 = uniform on the simplex)")
    stake_low: float = Field(gt=0, le=100, description="ambiguity example: the stage game's stake c(s) "
                             "is uniform on [stake_low, stake_high]")
    stake_high: float = Field(gt=0, le=100, description="upper end of the stakes")

    @model_validator(mode="after")
    def _ranges(self) -> "PrepareParams":
        if self.reward_low >= self.reward_high:
            raise ValueError(f"reward_low ({self.reward_low}) must be < reward_high ({self.reward_high})")
        if self.stake_low > self.stake_high:
            raise ValueError(f"stake_low ({self.stake_low}) must be <= stake_high ({self.stake_high})")
        return self


class SolverParams(Strict):
    damping: float = Field(gt=0, le=1, description="step eta of pi <- (1 - eta) pi + eta LogitResponse(pi)")
    tol: float = Field(gt=0, le=1e-3, description="stop when max |LogitResponse(pi) - pi| <= tol")
    max_iter: int = Field(ge=1, le=1_000_000, description="damped steps at most")
    inner_tol: float = Field(gt=0, le=1e-3, description="soft Bellman residual of each logit response")
    inner_max_iter: int = Field(ge=1, le=10_000, description="soft policy-iteration steps per response at most")


class UniquenessParams(Strict):
    n_starts: int = Field(ge=2, le=100_000, description="random starting policies per game")
    start_concentration: float = Field(gt=0, le=100, description="Dirichlet concentration of the starts "
                                       "(< 1 puts them near deterministic policies)")
    distinct_radius: float = Field(gt=0, le=1, description="two converged runs further apart (sup norm) "
                                   "count as distinct equilibria")
    tau_sweep: list[PositiveTau] = Field(min_length=1, description="context: the same test at these tau")
    sweep_max_iter: int = Field(ge=1, le=1_000_000, description="damped steps at most in the tau sweep")


class VerifyParams(Strict):
    tau_grid: list[PositiveTau] = Field(min_length=1, description="tau values of the matrix-game checks")
    n_matrix_games: int = Field(ge=1, le=1000, description="random 2x2 general-sum and zero-sum matrix games")
    zero_sum_actions: list[Annotated[int, Field(ge=2, le=10)]] = Field(
        min_length=1, description="sizes n of the n x n zero-sum games compared with open_spiel's MMD")
    mmd_iterations: int = Field(ge=1, le=1_000_000, description="open_spiel MMD iterations")
    n_starts: int = Field(ge=1, le=10_000, description="random starts for the matching-pennies check")


class AmbiguityParams(Strict):
    tau_grid: list[PositiveTau] = Field(min_length=1, description="tau values at which the shared QRE "
                                        "and the number of QREs are measured")
    n_starts: int = Field(ge=1, le=100_000, description="random starts per game and tau")
    max_iter: int = Field(ge=1, le=1_000_000, description="damped steps at most (runs that have not "
                          "converged by then are not counted as equilibria)")
    plot_tau: list[PositiveTau] = Field(min_length=2, max_length=2,
                                        description="[low, high] tau range of the QRE-correspondence plot")
    plot_points: int = Field(ge=2, le=1000, description="tau values in the plot")


class RecoveryParams(Strict):
    n_min: int = Field(ge=1, le=10**9, description="smallest number of demonstrations")
    n_max: int = Field(ge=1, le=10**9, description="largest number of demonstrations")
    points_per_decade: int = Field(ge=1, le=100, description="log-grid density of n")
    repetitions: int = Field(ge=2, le=10_000, description="independent demonstration sets per n")
    smoothing: float = Field(gt=0, le=100, description="add-alpha smoothing of the count estimates")
    sampling: Literal["generative", "occupancy"] = Field(
        description="generative = n/S expert queries in every state (the paper's model); "
                    "occupancy = i.i.d. from the QRE's discounted state occupancy")

    @model_validator(mode="after")
    def _grid(self) -> "RecoveryParams":
        if self.n_min >= self.n_max:
            raise ValueError(f"n_min ({self.n_min}) must be < n_max ({self.n_max})")
        return self


class TransferParams(Strict):
    n: int = Field(ge=1, le=10**9, description="demonstrations per demonstration set (generative model)")
    repetitions: int = Field(ge=1, le=10_000, description="independent demonstration sets per game")
    learner_starts: int = Field(ge=1, le=10_000, description="random starts of the learner's QRE solve "
                                "per demonstration set")
    start_concentration: float = Field(gt=0, le=100, description="Dirichlet concentration of the "
                                       "learner's starts (< 1 puts them near deterministic policies)")


class TrainParams(Strict):
    tau: PositiveTau = Field(description="entropy regularisation (temperature) of the study's games")
    tau_control: PositiveTau = Field(description="the control arm's temperature: the paper's "
                                     "regularisation taken (nearly) out; the same experiments "
                                     "(uniqueness, transfer) rerun at it")
    solver: SolverParams
    uniqueness: UniquenessParams
    verify: VerifyParams
    ambiguity: AmbiguityParams
    recovery: RecoveryParams
    transfer: TransferParams

    @model_validator(mode="after")
    def _control(self) -> "TrainParams":
        if self.tau_control >= self.tau:
            raise ValueError(f"tau_control ({self.tau_control}) must be < tau ({self.tau}): the control "
                             f"arm has less regularisation than the study's games")
        return self


class EvaluateParams(Strict):
    n_boot: int = Field(ge=100, le=100_000, description="bootstrap resamples of the repetitions")
    ci_level: float = Field(gt=0.5, lt=1, description="confidence level of the slope intervals")
    fit_n_min: int = Field(ge=1, le=10**9, description="fit the log-log slopes on n >= fit_n_min")


class MairlParams(Strict):
    prepare: PrepareParams
    train: TrainParams
    evaluate: EvaluateParams


PARAMS = MairlParams
