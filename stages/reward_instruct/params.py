"""Typed parameters of the reward_instruct study (stages/reward_instruct/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict


class PrepareStep(Strict):
    n_reward: int = Field(ge=100, le=1700, description="digits the reward model trains on; the judge gets the rest")
    clf_steps: int = Field(ge=1, description="Adam steps of the reward model")
    judge_steps: int = Field(ge=1, description="Adam steps of the judge")
    reward_hidden: int = Field(ge=8, description="hidden width of the reward model")
    judge_hidden: int = Field(ge=8, description="hidden width of the judge")
    judge_noise: float = Field(ge=0, le=1, description="Gaussian input noise the judge trains under")
    T: int = Field(ge=10, le=1000, description="diffusion timesteps")
    beta_max: float = Field(gt=0, lt=1, description="last beta of the linear schedule")
    hidden: int = Field(ge=8, description="epsilon-net hidden width")
    layers: int = Field(ge=1, le=8, description="epsilon-net hidden layers")
    teacher_steps: int = Field(ge=1, description="teacher pre-training steps")
    batch: int = Field(ge=8, description="batch of every pre-training")
    lr: float = Field(gt=0, description="Adam learning rate of every pre-training")


class Schedule(Strict):
    steps: int = Field(ge=1, description="generator training steps")
    lr: float = Field(gt=0, description="Adam learning rate")
    lam: float = Field(ge=0, description="R0's weight regularisation lambda")
    every: int = Field(ge=1, description="judge the generator every this many steps (the curve's points)")

    @model_validator(mode="after")
    def _every_divides(self) -> "Schedule":
        if self.steps % self.every:
            raise ValueError(f"every ({self.every}) must divide steps ({self.steps})")
        return self


class TrainStep(Strict):
    gen_steps: int = Field(ge=1, le=50, description="sampling steps of the few-step generator")
    teacher_eval_steps: int = Field(ge=2, description="DDIM steps of the teacher reference")
    distill_steps: int = Field(ge=2, description="DDIM steps of the distillation targets")
    pool: int = Field(ge=16, description="(noise, class, teacher target) triples the distillation draws from")
    w_reward: float = Field(ge=0, description="weight of the reward term in distillation + reward")
    batch: int = Field(ge=8, description="generator batch")
    per_class: int = Field(ge=2, description="judged samples per class at each point")
    gentle: Schedule
    aggressive: Schedule

    @model_validator(mode="after")
    def _few_steps(self) -> "TrainStep":
        if self.gen_steps >= self.teacher_eval_steps:
            raise ValueError(f"gen_steps ({self.gen_steps}) must be below teacher_eval_steps ({self.teacher_eval_steps})")
        return self


class EvaluateStep(Strict):
    grid_per_class: int = Field(ge=1, le=20, description="samples per class in the PNG grid")


class RewardInstructParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep

    @model_validator(mode="after")
    def _grid_fits(self) -> "RewardInstructParams":
        if self.evaluate.grid_per_class > self.train.per_class:
            raise ValueError(f"evaluate.grid_per_class ({self.evaluate.grid_per_class}) must be <= "
                             f"train.per_class ({self.train.per_class})")
        return self


PARAMS = RewardInstructParams
