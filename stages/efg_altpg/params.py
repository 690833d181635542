"""Typed parameters of the efg_altpg study (one section per step; see params.json)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

Game = Literal["kuhn_poker", "leduc_poker"]
Param = Literal["direct", "softmax", "npg"]
Step = Annotated[float, Field(gt=0, le=1000)]
# STUDIES.md (efg_altpg): the checks use tau <= 0.01; a larger tau only buys an O(tau) floor
Tau = Annotated[float, Field(gt=0, le=0.01)]


class RandomGamesParams(Strict):
    count: int = Field(ge=0, le=20, description="random poker-like EFGs to draw (0 = none)")
    signals: int = Field(ge=2, le=6, description="private signals per player")
    depth: int = Field(ge=2, le=8, description="longest public betting sequence (>= 2: both players act)")
    branching: int = Field(ge=2, le=8, description="actions per public move")
    stop_prob: float = Field(ge=0, lt=1, description="chance that a non-root move ends the game")


class PrepareParams(Strict):
    games: list[Game] = Field(min_length=1, description="OpenSpiel games to build the sequence form of")
    random: RandomGamesParams

    @model_validator(mode="after")
    def _kuhn(self) -> "PrepareParams":
        if len(set(self.games)) != len(self.games):
            raise ValueError(f"games must be distinct, got {self.games}")
        if "kuhn_poker" not in self.games:
            raise ValueError(f"games must include 'kuhn_poker' (the must checks read it), got {self.games}")
        return self


class StepGrid(Strict):
    """Step sizes tried per parametrisation; the best of each grid is kept (lowest mean
    last-iterate exploitability over the last ``last_fraction`` of the run), separately for
    the regularized and the unregularized runs."""

    direct: list[Step] = Field(min_length=1)
    softmax: list[Step] = Field(min_length=1)
    npg: list[Step] = Field(min_length=1)


class StepEach(Strict):
    direct: Step
    softmax: Step
    npg: Step


class GameRun(Strict):
    tau: Tau = Field(description="weight of the dilated-entropy regularizer")
    iterations: int = Field(ge=10, le=1_000_000, description="alternating rounds (both players step once)")
    eval_every: int = Field(ge=1, le=10_000, description="record the last-iterate exploitability every k rounds")
    inits: int = Field(ge=1, le=20, description="random initial policies per variant and step")
    steps: StepGrid


class SampledParams(Strict):
    game: Game = Field(description="game of the sampled-trajectory runs")
    tau: Tau
    iterations: int = Field(ge=10, le=1_000_000)
    eval_every: int = Field(ge=1, le=10_000)
    episodes: int = Field(ge=1, le=1_000_000, description="sampled episodes per gradient estimate")
    steps: StepGrid


class RateParams(Strict):
    game: Game = Field(description="game of the iterations-to-epsilon sweep")
    epsilons: list[Annotated[float, Field(gt=0, lt=1)]] = Field(min_length=3, description="targets, decreasing")
    tau_over_epsilon: float = Field(gt=0, le=1, description="tau = this x epsilon (an O(tau) floor below epsilon)")
    max_iterations: int = Field(ge=10, le=10_000_000, description="a run that has not reached epsilon by then "
                                                                  "counts as a miss")
    starts: int = Field(ge=2, le=50, description="random initial policies per verdict seed (each seed's "
                                                 "fit runs through their geometric mean; its slope's CI is "
                                                 "over them)")
    variants: list[Param] = Field(min_length=1)
    steps: StepEach

    @model_validator(mode="after")
    def _decreasing(self) -> "RateParams":
        if sorted(set(self.epsilons), reverse=True) != list(self.epsilons):
            raise ValueError(f"epsilons must be strictly decreasing, got {self.epsilons}")
        if len(set(self.variants)) != len(self.variants):
            raise ValueError(f"variants must be distinct, got {self.variants}")
        return self


class CfrPlusParams(Strict):
    kuhn_poker: int = Field(ge=1, le=100_000, description="CFR+ iterations on Kuhn")
    leduc_poker: int = Field(ge=1, le=100_000, description="CFR+ iterations on Leduc")
    random: int = Field(ge=1, le=100_000, description="CFR+ iterations on each random game")
    checkpoints: int = Field(ge=2, le=200, description="log-spaced iterations where exploitability is measured")


class TrainParams(Strict):
    init_scale: float = Field(ge=0, le=10, description="initial logits ~ N(0, init_scale^2) per action (seeded)")
    floor: float = Field(gt=0, le=0.1, description="every action keeps probability >= floor (direct parametrisation)")
    last_fraction: float = Field(gt=0, le=1, description="'late' part of a run: mean exploitability over the "
                                                         "last fraction of the rounds (STUDIES.md: 20%)")
    kuhn_poker: GameRun
    leduc_poker: GameRun
    random: GameRun
    sampled: SampledParams
    rate: RateParams
    cfr_plus: CfrPlusParams


class EvaluateParams(Strict):
    ci_level: float = Field(gt=0.5, lt=1, description="confidence level of the rate slope's interval over seeds")


class EfgAltPGParams(Strict):
    prepare: PrepareParams
    train: TrainParams
    evaluate: EvaluateParams

    @model_validator(mode="after")
    def _games_built(self) -> "EfgAltPGParams":
        t = self.train
        need = {t.sampled.game, t.rate.game, "leduc_poker"}
        missing = sorted(need - set(self.prepare.games))
        if missing:
            raise ValueError(f"train uses {missing}, which prepare.games {self.prepare.games} does not build")
        return self


PARAMS = EfgAltPGParams
