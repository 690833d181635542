"""Typed parameters of the mpo study (stages/mpo/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict


class PrepareStep(Strict):
    ref_states: int = Field(ge=20, description="states the reference (SFT) policy is cloned on")
    ref_p_random: float = Field(ge=0, le=1, description="share of random labels in the reference's cloning data")
    ref_steps: int = Field(ge=1, description="behaviour-cloning Adam steps")
    hidden: int = Field(ge=4, le=1024, description="width of the policy MLP's two hidden layers")
    pairs: int = Field(ge=10, description="preference pairs in one dataset draw")
    flips: list[float] = Field(min_length=2, description="label-flip rates, increasing, starting at 0 (clean)")
    target_flip: float = Field(ge=0, lt=0.5, description="the flip rate the evolution search targets")
    mixed: float = Field(ge=0, le=1, description="share of pairs drawn among the worse half of actions in the mixed set")
    val_draws: int = Field(ge=1, description="validation dataset draws per setting (beta selection, ES fitness)")
    test_draws: int = Field(ge=1, description="held-out test dataset draws per setting")

    @model_validator(mode="after")
    def _flips(self) -> "PrepareStep":
        f = self.flips
        if f[0] != 0.0 or any(b <= a for a, b in zip(f, f[1:])) or f[-1] >= 0.5:
            raise ValueError(f"flips must start at 0, increase strictly and stay below 0.5, got {f}")
        if self.target_flip not in f:
            raise ValueError(f"target_flip ({self.target_flip}) must be one of flips {f}")
        return self


class TrainStep(Strict):
    steps: int = Field(ge=1, description="full-batch Adam steps of preference optimisation")
    lr: float = Field(gt=0, description="Adam learning rate")
    dpo_betas: list[float] = Field(min_length=1, description="DPO beta grid (must contain 1.0: the untuned DPO)")
    orpo_betas: list[float] = Field(min_length=1, description="ORPO beta grid (weight of the odds-ratio term)")
    cdpo_eps: float = Field(gt=0, lt=0.5, description="cDPO label smoothing (beta from the DPO grid)")
    es_popsize: int = Field(ge=2, description="CMA-ES population")
    es_generations: int = Field(ge=1, description="CMA-ES generations")
    es_sigma: float = Field(gt=0, description="CMA-ES initial step size (search coordinates)")
    episodes: int = Field(ge=1, description="episodes per return estimate")

    @model_validator(mode="after")
    def _dpo_one(self) -> "TrainStep":
        if 1.0 not in self.dpo_betas or any(b <= 0 for b in self.dpo_betas + self.orpo_betas):
            raise ValueError(f"dpo_betas must contain 1.0 and all betas must be > 0, got {self.dpo_betas}, "
                             f"{self.orpo_betas}")
        return self


class EvaluateStep(Strict):
    gym_episodes: int = Field(ge=1, description="episodes of each registered policy in gymnasium's Pendulum-v1")


class MpoParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep


PARAMS = MpoParams
