"""Typed parameters of the t2mir study (stages/t2mir/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict


class PrepareStep(Strict):
    size: int = Field(ge=3, le=32, description="DarkRoom grid side; the tasks are its size^2 goal cells")
    holdout: float = Field(gt=0, lt=0.5, description="share of goal cells held out of training")
    pool: int = Field(ge=10, description="random-policy transitions in each task's in-context dataset")


class TrainStep(Strict):
    steps: int = Field(ge=1, description="gradient steps per variant")
    tasks_per_batch: int = Field(ge=1, description="tasks drawn per batch")
    contexts_per_task: int = Field(ge=1, description="contexts per drawn task (positives of the contrastive loss)")
    k: int = Field(ge=1, description="transitions per context")
    lr: float = Field(gt=0, description="Adam learning rate")
    d: int = Field(ge=4, description="model width")
    heads: int = Field(ge=1, description="attention heads")
    layers: int = Field(ge=1, description="transformer blocks (the last one carries the variant's FFN)")
    n_token: int = Field(ge=1, description="experts of the token-wise MoE")
    n_task: int = Field(ge=1, description="experts of the task-wise MoE")
    top_k: int = Field(ge=1, description="experts each router selects")
    hidden: int = Field(ge=1, description="hidden width of one expert")
    balance_w: float = Field(ge=0, description="weight of the token router's load-balance loss")
    contrast_w: float = Field(ge=0, description="weight of the task router's contrastive loss")
    tau: float = Field(gt=0, description="temperature of the contrastive loss")

    @model_validator(mode="after")
    def _shapes(self) -> "TrainStep":
        if self.d % self.heads:
            raise ValueError(f"d ({self.d}) must be a multiple of heads ({self.heads})")
        if self.d % 2:
            raise ValueError(f"d ({self.d}) must be even (T2MIR's two branches write half the width each)")
        if self.top_k > min(self.n_token, self.n_task):
            raise ValueError(f"top_k ({self.top_k}) must be <= n_token ({self.n_token}) and n_task ({self.n_task})")
        return self


class EvaluateStep(Strict):
    queries_per_task: int = Field(ge=1, description="query cells per held-out task for the action accuracy")
    train_queries_per_task: int = Field(ge=1, description="query cells per training task for the training-task accuracy")
    episodes_per_task: int = Field(ge=1, description="in-context rollouts per held-out task")
    horizon: int = Field(ge=1, description="steps of one rollout")
    gif_frames: int = Field(ge=2, le=400, description="frames of the rendered rollout GIF, at most")


class T2mirParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep

    @model_validator(mode="after")
    def _enough_tasks(self) -> "T2mirParams":
        n = self.prepare.size ** 2
        n_test = max(1, round(self.prepare.holdout * n))
        if n_test < 2 or n - n_test < 2:
            raise ValueError(f"prepare.size {self.prepare.size} with holdout {self.prepare.holdout} leaves "
                             f"{n - n_test} train / {n_test} held-out tasks; each side needs >= 2 "
                             f"(the shuffled-context control draws another task)")
        return self


PARAMS = T2mirParams
