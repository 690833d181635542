"""Typed parameters of the noisy_grpo study (stages/noisy_grpo/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict


class PrepareStep(Strict):
    grid: int = Field(ge=3, le=12, description="image side, cells")
    max_per_colour: int = Field(ge=1, le=5, description="most objects of one colour")
    n_train: int = Field(ge=10, description="training images (SFT and RL prompts)")
    n_test: int = Field(ge=10, description="test images, in and out of distribution each")
    p_wrong: float = Field(ge=0, le=1, description="fraction of SFT chains with one count misread")
    ood_dim: list[float] = Field(min_length=2, max_length=2, description="OOD object intensity range")
    ood_pixel_noise: float = Field(gt=0, le=2, description="OOD sensor noise standard deviation")

    @model_validator(mode="after")
    def _fits(self) -> "PrepareStep":
        if 3 * self.max_per_colour > self.grid ** 2:
            raise ValueError(f"a {self.grid}x{self.grid} grid cannot hold 3 x {self.max_per_colour} objects")
        lo, hi = self.ood_dim
        if not 0 < lo <= hi < 1:
            raise ValueError(f"ood_dim must satisfy 0 < low <= high < 1, got {self.ood_dim}")
        return self


class TrainStep(Strict):
    d_model: int = Field(ge=8, le=128, description="transformer width")
    sft_steps: int = Field(ge=1, description="SFT warm-up steps")
    sft_batch: int = Field(ge=1, description="SFT batch")
    sft_lr: float = Field(gt=0, description="SFT learning rate")
    rl_steps: int = Field(ge=1, description="RL steps per method")
    replicates: int = Field(ge=1, le=10, description="RL runs per method (RL seeds), from the one SFT policy")
    prompts: int = Field(ge=1, description="prompts (images) per RL step")
    group: int = Field(ge=2, description="rollouts per prompt (GRPO group)")
    rl_lr: float = Field(gt=0, description="RL learning rate")
    clip: float = Field(gt=0, lt=1, description="PPO clip")
    beta: float = Field(ge=0, description="KL(k3) weight to the SFT reference")
    epochs: int = Field(ge=1, description="updates per batch of rollouts")
    sigma_start: float = Field(ge=0, description="largest rollout noise level at the first RL step")
    sigma_end: float = Field(ge=0, description="largest rollout noise level at the last RL step")
    prior_var: float = Field(gt=0, description="variance of the noise-level prior")
    obs_var: float = Field(gt=0, description="variance of the reward likelihood")

    @model_validator(mode="after")
    def _noise(self) -> "TrainStep":
        if max(self.sigma_start, self.sigma_end) <= 0:
            raise ValueError("sigma_start or sigma_end must be > 0 (NoisyGRPO needs noise)")
        return self


class EvaluateStep(Strict):
    level: float = Field(gt=0, lt=1, description="level of the paired t intervals")


class NoisyGrpoParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep


PARAMS = NoisyGrpoParams
