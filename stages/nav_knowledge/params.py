"""Typed parameters of the nav_knowledge study (one section per step; see params.json)."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

GridSize = Annotated[int, Field(ge=8, le=256)]


class PrepareParams(Strict):
    grid: int = Field(ge=6, le=40, description="side of the square gridworld of the inference experiment")
    n_walls: int = Field(ge=2, le=80, description="wall segments per world (the unknowns of the posterior)")
    wall_len: list[Annotated[int, Field(ge=1, le=10)]] = Field(
        min_length=2, max_length=2, description="[shortest, longest] segment length in cells")
    p_known: float = Field(gt=0, lt=1, description="each segment is known to the agent with this probability "
                                                   "(also the prior of the posterior)")
    beta: float = Field(gt=0, le=50, description="rationality of the softmax over next-step cost-to-go")
    agents: int = Field(ge=1, le=200, description="agents (world + knowledge set) per run")
    trajectories: int = Field(ge=2, le=20, description="trajectories per agent (same knowledge, new start/goal)")
    held_out: int = Field(ge=1, le=10, description="of those, held out for the predictive NLL")
    min_dist: int = Field(ge=1, le=200, description="start and goal at least this many moves apart")
    max_steps: int = Field(ge=10, le=5000, description="a walk stops after this many steps")

    @model_validator(mode="after")
    def _consistent(self) -> "PrepareParams":
        if self.wall_len[0] > self.wall_len[1]:
            raise ValueError(f"wall_len must be [shortest, longest], got {self.wall_len}")
        if self.wall_len[1] > self.grid:
            raise ValueError(f"wall_len longest ({self.wall_len[1]}) must be <= grid ({self.grid})")
        if self.held_out >= self.trajectories:
            raise ValueError(f"held_out must be < trajectories, got held_out={self.held_out}, "
                             f"trajectories={self.trajectories}")
        if self.n_walls * self.wall_len[1] > self.grid * self.grid // 3:
            raise ValueError(f"n_walls * longest wall = {self.n_walls * self.wall_len[1]} must be <= a third of "
                             f"the {self.grid * self.grid} cells")
        return self


class TrainParams(Strict):
    particles: int = Field(ge=4, le=5000, description="SIS particles (plain SIS and resample-move alike)")
    moves: int = Field(ge=1, le=100, description="Metropolis single-wall flips per particle at each rejuvenation")
    ess_frac: float = Field(gt=0, le=1, description="resample when ESS < ess_frac * particles")
    gibbs_sweeps: int = Field(ge=2, le=10_000, description="systematic Gibbs sweeps over all walls")
    gibbs_burn: int = Field(ge=0, le=10_000, description="sweeps discarded before averaging")
    gibbs_keep_every: int = Field(ge=1, le=1000, description="thinning of the Gibbs states kept for the NLL")

    @model_validator(mode="after")
    def _burn(self) -> "TrainParams":
        if self.gibbs_burn >= self.gibbs_sweeps:
            raise ValueError(f"gibbs_burn must be < gibbs_sweeps, got {self.gibbs_burn} >= {self.gibbs_sweeps}")
        return self


class ReplanParams(Strict):
    sizes: list[GridSize] = Field(min_length=1, max_length=8, description="grid sides of the replanning "
                                  "benchmark (strictly increasing; must include 64, the claim's size)")
    wall_frac: float = Field(gt=0, le=0.3, description="fraction of cells covered by wall segments")
    wall_len: list[Annotated[int, Field(ge=1, le=40)]] = Field(min_length=2, max_length=2,
                                                              description="[shortest, longest] segment length")
    p_known: float = Field(ge=0, lt=1, description="fraction of segments the benchmark agent knows")
    max_events: int = Field(ge=1, le=1000, description="replanning events timed per grid size at most")
    repeats: int = Field(ge=1, le=20, description="best of this many timings of each method")

    @model_validator(mode="after")
    def _sizes(self) -> "ReplanParams":
        if sorted(set(self.sizes)) != list(self.sizes):
            raise ValueError(f"sizes must be strictly increasing, got {self.sizes}")
        if 64 not in self.sizes:
            raise ValueError(f"sizes must include 64 (the claim is at 64x64), got {self.sizes}")
        if self.wall_len[0] > self.wall_len[1]:
            raise ValueError(f"wall_len must be [shortest, longest], got {self.wall_len}")
        return self


class EvaluateParams(Strict):
    relevance: float = Field(gt=0, le=100, description="a wall is behaviour-relevant when flipping it at the true "
                                                       "knowledge changes the training log-likelihood by more")


class NavKnowledgeParams(Strict):
    prepare: PrepareParams
    train: TrainParams
    replan: ReplanParams
    evaluate: EvaluateParams


PARAMS = NavKnowledgeParams
