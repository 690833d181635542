"""Typed parameters of the auto_refine study (stages/auto_refine/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field

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


class EvaluateStep(Strict):
    must_margin: float = Field(ge=0, le=1, description="the must's multi-hop EM margin (reported beside the check)")


class AutoRefineParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep


PARAMS = AutoRefineParams
