"""Typed parameters of the dima study (stages/dima/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

SEQ_TRAINING = ("denoise", "chain")


class PrepareStep(Strict):
    n_agents: int = Field(ge=2, le=6, description="agents (and landmarks) of simple_spread in the main experiment")
    control_agents: int = Field(ge=1, le=6, description="agents in the control run (1: the chain has one step, so sequential = joint)")
    max_cycles: int = Field(ge=2, le=200, description="steps per episode")
    train_episodes: int = Field(ge=1, description="behaviour episodes the world models learn from")
    test_episodes: int = Field(ge=1, description="held-out behaviour episodes (other env seeds)")
    val_episodes: int = Field(ge=1, description="validation episodes (other env seeds) for every model's early stopping")
    rich_episodes: int = Field(ge=1, description="training episodes of the data-rich control (main N; the paper's advantage is in the low-data regime)")
    eps: float = Field(ge=0, le=1, description="behaviour policy: per agent and step, a random action with this probability, else the heuristic")

    @model_validator(mode="after")
    def _control_smaller(self) -> "PrepareStep":
        if self.rich_episodes <= self.train_episodes:
            raise ValueError(f"rich_episodes ({self.rich_episodes}) must exceed train_episodes ({self.train_episodes})")
        if self.control_agents >= self.n_agents:
            raise ValueError(f"control_agents ({self.control_agents}) must be below n_agents ({self.n_agents})")
        return self


class TrainStep(Strict):
    target_params: int = Field(ge=100, le=10_000_000, description="parameters of every world model (widths are matched to it)")
    layers: int = Field(ge=1, le=6, description="hidden layers of every MLP")
    steps: int = Field(ge=1, description="Adam steps, the same for every model")
    batch: int = Field(ge=8, description="transitions per step")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate")
    sigma_max: float = Field(gt=0, le=100, description="noise level of the chain's first step (standardised units)")
    seq_training: str = Field(description="how the chain is trained: denoise (teacher-forced, as the paper) or chain (unrolled)")
    eval_every: int = Field(ge=1, description="Adam steps between checks of the validation loss (early stopping, the same for every model)")
    patience: int = Field(ge=0, description="checks without improvement before training stops (0: never stop; the best weights are kept either way)")

    @model_validator(mode="after")
    def _known(self) -> "TrainStep":
        if self.seq_training not in SEQ_TRAINING:
            raise ValueError(f"seq_training must be one of {list(SEQ_TRAINING)}, got {self.seq_training!r}")
        return self


class PlanParams(Strict):
    horizon: int = Field(ge=1, le=50, description="imagined steps per candidate")
    candidates: int = Field(ge=2, description="action sequences per CEM round")
    elites: int = Field(ge=1, description="best sequences the CEM refits to")
    iterations: int = Field(ge=1, le=20, description="CEM rounds per real step")

    @model_validator(mode="after")
    def _elites(self) -> "PlanParams":
        if self.elites > self.candidates:
            raise ValueError(f"elites ({self.elites}) must be at most candidates ({self.candidates})")
        return self


class EvaluateStep(Strict):
    horizon: int = Field(ge=1, le=100, description="H: the imagined-rollout horizon of the must check")
    plan: PlanParams
    episodes: int = Field(ge=1, description="real-env episodes per policy (same env seeds for every policy)")


class BaselineStep(Strict):
    steps: int = Field(ge=1, description="real-env steps of SB3 PPO (model-free reference) on claimbench/DimaSpread-v0")
    n_steps: int = Field(ge=2, description="PPO rollout length per update")
    batch: int = Field(ge=2, description="PPO minibatch size")
    epochs: int = Field(ge=1, le=50, description="PPO epochs per update")
    lr: float = Field(gt=0, lt=1, description="PPO learning rate")
    hidden: int = Field(ge=4, le=1024, description="width of PPO's two hidden layers (policy and value)")

    @model_validator(mode="after")
    def _batch(self) -> "BaselineStep":
        if self.batch > self.n_steps:
            raise ValueError(f"batch ({self.batch}) must be at most n_steps ({self.n_steps})")
        return self


class DimaParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    baseline: BaselineStep
    evaluate: EvaluateStep

    @model_validator(mode="after")
    def _horizon_fits(self) -> "DimaParams":
        if self.evaluate.horizon > self.prepare.max_cycles:
            raise ValueError(f"evaluate.horizon ({self.evaluate.horizon}) must be at most prepare.max_cycles "
                             f"({self.prepare.max_cycles})")
        return self


PARAMS = DimaParams
