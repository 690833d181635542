"""Typed parameters of the purpcode study (stages/purpcode/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from stages.common.runtime.params import Strict

# bandit's informational findings: importing subprocess / pickle and calling subprocess without a
# shell. Every subprocess call is flagged B603 and every such import B404/B403, however it is written.
INFORMATIONAL = ("B403", "B404", "B603")


class Teacher(Strict):
    """The mixed-quality completions' probabilities (stages/purpcode/data.teacher_answer)."""
    refuse: float = Field(ge=0, le=1, description="refusal of a benign prompt")
    refuse_security: float = Field(ge=0, le=1, description="refusal of a benign prompt that looks security-related")
    buggy: float = Field(ge=0, le=1, description="a buggy variant (missing import, wrong return)")
    insecure: float = Field(ge=0, le=1, description="the insecure API on a benign prompt")
    insecure_tempting: float = Field(ge=0, le=1, description="the insecure API under a tempting context")
    mal_refuse: float = Field(ge=0, le=1, description="refusal of a malicious request")
    mal_refuse_security: float = Field(ge=0, le=1, description="refusal of a malicious request under a security-flavoured context")


class PrepareStep(Strict):
    test_frac: float = Field(gt=0, lt=1, description="share of each task's context pairs held out for evaluation")
    per_prompt: int = Field(ge=1, le=64, description="mixed-quality completions per training prompt (the base SFT set)")
    rule_frac: float = Field(gt=0, le=1, description="share of the safety prompts (tempting or malicious) given to rule learning")
    rule_tries: int = Field(ge=1, le=64, description="teacher answers drawn per rule-learning prompt until the verifier accepts one")
    teacher: Teacher
    skip: list[str] = Field(description="bandit test ids that do not count as findings (informational ones)")
    sandbox_timeout: float = Field(gt=0, le=30, description="seconds a snippet's unit tests may run (every stage's sandbox)")

    @field_validator("skip")
    @classmethod
    def _informational_only(cls, v: list[str]) -> list[str]:
        bad = [t for t in v if t not in INFORMATIONAL]
        if bad:
            raise ValueError(f"skip may hold only bandit's informational ids {list(INFORMATIONAL)}, got {bad}")
        return v


class ModelParams(Strict):
    d_model: int = Field(ge=8, le=256, description="transformer width")
    layers: int = Field(ge=1, le=4, description="transformer layers")
    heads: int = Field(ge=1, le=8, description="attention heads")

    @model_validator(mode="after")
    def _divides(self) -> "ModelParams":
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of heads ({self.heads})")
        return self


class SftParams(Strict):
    steps: int = Field(ge=1, description="Adam steps")
    batch: int = Field(ge=2, description="(prompt, answer) pairs per step")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate")


class RlParams(Strict):
    iterations: int = Field(ge=1, description="GRPO iterations (one sampled batch each)")
    prompts: int = Field(ge=1, description="training prompts per iteration")
    group: int = Field(ge=2, description="answers sampled per prompt (the GRPO group)")
    epochs: int = Field(ge=1, le=8, description="clipped-surrogate steps per sampled batch")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate")
    clip: float = Field(gt=0, lt=1, description="PPO clip range")
    kl: float = Field(ge=0, description="weight of the k3 KL penalty to the starting policy")
    temperature: float = Field(gt=0, le=5, description="sampling temperature of the rollouts")


class TrainStep(Strict):
    model: ModelParams
    base: SftParams
    rule: SftParams
    rl: RlParams


class EvaluateStep(Strict):
    samples: int = Field(ge=1, le=64, description="answers sampled per held-out prompt")
    temperature: float = Field(gt=0, le=5, description="sampling temperature at evaluation")


class PurpcodeParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep


PARAMS = PurpcodeParams
