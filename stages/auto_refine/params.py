"""Typed parameters of the auto_refine study (stages/auto_refine/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict


class PrepareStep(Strict):
    n_people: int = Field(ge=8, description="people in the generated knowledge base")
    n_cities: int = Field(ge=2, description="cities (the answers)")
    n_distractors: int = Field(ge=0, description="distractor documents per person (likes / visited)")
    test_frac: float = Field(gt=0, lt=1, description="share of subjects held out for the test questions")


class TrainStep(Strict):
    k: int = Field(ge=1, le=20, description="documents per BM25 search (top-k)")
    hidden: int = Field(ge=1, description="hidden units of the policy's scorer")
    sft_rounds: int = Field(ge=0, description="warm-up rounds on the policy's own correct samples")
    steps: int = Field(ge=0, description="GRPO steps")
    batch: int = Field(ge=1, description="questions per GRPO step")
    group: int = Field(ge=2, description="samples per question (the GRPO group)")
    lr: float = Field(gt=0, description="Adam learning rate")
    clip: float = Field(gt=0, description="PPO clip range")
    retrieval_reward: float = Field(ge=0, le=1, description="reward when the answer is wrong but in the refined knowledge")
    eval_every: int = Field(ge=1, description="GRPO steps between two held-out evaluations of the learning curve")
    reps: int = Field(ge=1, description="training replications of every arm per verdict seed (their figures are averaged)")

    @model_validator(mode="after")
    def _curve(self):
        if self.steps % self.eval_every:
            raise ValueError(f"steps ({self.steps}) must be a multiple of eval_every ({self.eval_every}): "
                             "the learning curve's last point is the final policy")
        if self.steps < self.eval_every:
            raise ValueError(f"steps ({self.steps}) must be at least eval_every ({self.eval_every})")
        return self


class EvaluateStep(Strict):
    reward_window: int = Field(ge=1, description="last GRPO steps whose mean training reward is reported per arm")


class AutoRefineParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep


PARAMS = AutoRefineParams
