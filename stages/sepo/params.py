"""Typed parameters of the sepo study (stages/sepo/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from stages.common.runtime.params import Strict


class PrepareStep(Strict):
    length: int = Field(ge=4, le=9, description="sequence length L (4^L sequences are enumerated exactly)")
    n_train: int = Field(ge=100, description="training sequences drawn from the Markov 'genome'")
    alpha: float = Field(gt=0, description="Dirichlet concentration of the Markov chain's transition rows")
    motif: str = Field(min_length=2, description="the reward's motif over ACGT")
    partial_weight: float = Field(ge=0, le=1, description="reward weight of the best partial motif match")

    @field_validator("motif")
    @classmethod
    def _acgt(cls, v: str) -> str:
        if set(v) - set("ACGT"):
            raise ValueError(f"motif must be over ACGT, got {v!r}")
        return v

    @model_validator(mode="after")
    def _fits(self) -> "PrepareStep":
        if len(self.motif) > self.length:
            raise ValueError(f"motif {self.motif!r} is longer than the sequences (length {self.length})")
        return self


class PretrainParams(Strict):
    hidden: int = Field(ge=4, le=2048, description="hidden units of the denoiser MLP")
    layers: int = Field(ge=1, le=6, description="hidden layers of the denoiser MLP")
    steps: int = Field(ge=1, description="Adam steps of pre-training")
    batch: int = Field(ge=8, description="sequences per pre-training step")
    lr: float = Field(gt=0, lt=1, description="pre-training Adam learning rate")


class SepoParams_(Strict):
    steps: int = Field(ge=1, description="SEPO steps (each: sample, score, `inner` Adam steps)")
    groups: int = Field(ge=1, description="groups of sequences sampled a step")
    group_size: int = Field(ge=2, description="sequences a group")
    inner: int = Field(ge=1, description="Adam steps on the clipped objective per sampled batch (mu)")
    lr: float = Field(gt=0, lt=1, description="SEPO Adam learning rate")
    clip: float = Field(gt=0, lt=1, description="PPO clipping epsilon of the ratio")
    per_group: bool = Field(description="standardise rewards within each group (GRPO) instead of across the batch (released code)")
    eval_every: int = Field(ge=1, description="exact (KL, reward) of the SEPO model every this many steps: the curve's points")
    snis_samples: int = Field(ge=1, description="M, the released loss's self-normalised importance samples per neighbour")


class RwftParams(Strict):
    samples: int = Field(ge=16, description="pre-trained samples the weighted loss is fitted on")
    temperatures: list[float] = Field(min_length=2, description="reward temperatures tau, weights exp(R / tau), decreasing")
    steps: int = Field(ge=1, description="Adam steps a temperature")
    batch: int = Field(ge=8, description="sequences a step")
    lr: float = Field(gt=0, lt=1, description="RWFT Adam learning rate")

    @field_validator("temperatures")
    @classmethod
    def _decreasing(cls, v: list[float]) -> list[float]:
        if any(t <= 0 for t in v) or any(b >= a for a, b in zip(v, v[1:])):
            raise ValueError(f"temperatures must be > 0 and strictly decreasing, got {v}")
        return v


class TrainStep(Strict):
    pretrain: PretrainParams
    sepo: SepoParams_
    rwft: RwftParams


class EvaluateStep(Strict):
    best_of: list[int] = Field(min_length=2, description="N of best-of-N, increasing (exact, from the pre-trained distribution)")
    tilt_betas: list[float] = Field(min_length=2, description="beta of the KL-optimal tilt p exp(R / beta), decreasing")
    n_check_samples: int = Field(ge=100, description="samples from the pre-trained model to check its exact mean reward")

    @model_validator(mode="after")
    def _orders(self) -> "EvaluateStep":
        if self.best_of[0] < 1 or any(b <= a for a, b in zip(self.best_of, self.best_of[1:])):
            raise ValueError(f"best_of must be >= 1 and strictly increasing, got {self.best_of}")
        if any(b <= 0 for b in self.tilt_betas) or any(b >= a for a, b in zip(self.tilt_betas, self.tilt_betas[1:])):
            raise ValueError(f"tilt_betas must be > 0 and strictly decreasing, got {self.tilt_betas}")
        return self


class SepoParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep


PARAMS = SepoParams
