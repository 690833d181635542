"""Typed parameters of the webdancer study (stages/webdancer/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict


class EnvParams(Strict):
    k: int = Field(ge=2, le=6, description="links per page (one leads on, the others are distractors)")
    depth: int = Field(ge=1, le=4, description="levels of pages below the home page (the deepest question)")
    n_topics: int = Field(ge=2, le=40, description="topic labels of links")
    n_values: int = Field(ge=2, le=40, description="fact values a page can show")
    max_steps: int = Field(ge=2, le=40, description="actions before an episode is cut (reward 0)")

    @model_validator(mode="after")
    def _topics(self) -> "EnvParams":
        if self.n_topics < self.k:
            raise ValueError(f"n_topics ({self.n_topics}) must be >= k ({self.k}): sibling links have distinct topics")
        return self


class PrepareStep(Strict):
    train_sites: int = Field(ge=2, description="generated training sites (SFT and RL questions)")
    test_sites: int = Field(ge=2, description="held-out sites (test questions), disjoint seeds")
    n_sft: int = Field(ge=10, description="questions whose sampled trajectories make the SFT data")
    n_rl: int = Field(ge=10, description="RL questions, disjoint from the SFT ones")
    n_test_per_depth: int = Field(ge=5, description="held-out test questions per depth")
    noise: float = Field(ge=0, lt=1, description="trajectory sampling: probability of a random click/back")
    wrong_answer: float = Field(ge=0, lt=1, description="trajectory sampling: probability of a wrong answer (rejected)")


class ArchParams(Strict):
    d_model: int = Field(ge=8, le=128, description="transformer width")
    layers: int = Field(ge=1, le=4, description="encoder layers")
    heads: int = Field(ge=1, le=8, description="attention heads")


class SftParams(Strict):
    epochs: int = Field(ge=1, description="passes over the kept trajectories' steps")
    batch: int = Field(ge=2, description="steps per minibatch")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate")


class RlParams(Strict):
    iterations: int = Field(ge=1, description="RL iterations (rollout batch + update)")
    questions: int = Field(ge=1, description="questions per iteration")
    group: int = Field(ge=2, description="rollouts per question (the group)")
    epochs: int = Field(ge=1, le=8, description="gradient steps per iteration")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate")
    clip: float = Field(gt=0, lt=1, description="lower ratio clip")
    clip_high: float = Field(gt=0, lt=1, description="upper ratio clip (DAPO clip-higher)")

    @model_validator(mode="after")
    def _higher(self) -> "RlParams":
        if self.clip_high < self.clip:
            raise ValueError(f"clip_high ({self.clip_high}) must be >= clip ({self.clip})")
        return self


class TrainStep(Strict):
    arch: ArchParams
    sft: SftParams
    rl: RlParams

    @model_validator(mode="after")
    def _heads(self) -> "TrainStep":
        if self.arch.d_model % self.arch.heads:
            raise ValueError(f"d_model ({self.arch.d_model}) must be a multiple of heads ({self.arch.heads})")
        return self


class EvaluateStep(Strict):
    level: float = Field(gt=0.5, lt=1, description="level of the paired t intervals")


class WebdancerParams(Strict):
    env: EnvParams
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep


PARAMS = WebdancerParams
