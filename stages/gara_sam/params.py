"""Typed parameters of the gara_sam study (stages/gara_sam/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, field_validator

from stages.common.runtime.params import Strict

SHAPE_KINDS = ("ellipse", "rect", "tri")


class PrepareStep(Strict):
    size: int = Field(ge=16, le=256, description="image side in pixels (a multiple of 4: the U-Net pools twice)")
    n_pretrain: int = Field(ge=16, description="clean scenes (every shape kind) that pre-train the frozen segmenter")
    n_adapt: int = Field(ge=8, description="adaptation scenes, each under one random seen corruption")
    clean_frac: float = Field(ge=0, le=1, description="clean adaptation scenes added, as a fraction of n_adapt")
    adapt_shapes: list[str] = Field(min_length=1, description="shape kinds of the adaptation scenes (the others appear only at test)")
    n_test: int = Field(ge=4, description="test scenes, each shown under every condition (clean + 8 corruptions)")
    severity_low: float = Field(ge=0, le=1, description="corruption severities are drawn uniformly in [severity_low, 1]")
    base_seed: int = Field(ge=0, description="the fixed seed of the pre-training scenes and of pre-training: the frozen stand-in for SAM is one model shared by every verdict seed, as SAM is")

    @field_validator("size")
    @classmethod
    def _pools(cls, v: int) -> int:
        if v % 4:
            raise ValueError(f"size must be a multiple of 4 (two 2x poolings), got {v}")
        return v

    @field_validator("adapt_shapes")
    @classmethod
    def _shapes(cls, v: list[str]) -> list[str]:
        bad = [k for k in v if k not in SHAPE_KINDS]
        if bad or len(set(v)) != len(v):
            raise ValueError(f"adapt_shapes must be distinct kinds of {list(SHAPE_KINDS)}, got {v}")
        return v


class Loop(Strict):
    steps: int = Field(ge=1, description="Adam steps")
    batch: int = Field(ge=2, le=4096, description="images per step")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate")


class AdaptParams(Strict):
    steps: int = Field(ge=1, description="Adam steps of every adaptation arm (the same for all)")
    batch: int = Field(ge=2, le=4096, description="images per step")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate of the adapters (LoRA and GaRA)")
    full_lr: float = Field(gt=0, lt=1, description="Adam learning rate of full fine-tuning")
    rank: int = Field(ge=1, le=64, description="LoRA rank = GaRA's maximum rank r_max")
    alpha: float = Field(gt=0, description="LoRA alpha (the update is scaled by alpha / rank)")
    lam: float = Field(ge=0, description="GaRA's rank penalty: lam x mean expected gate")
    tau: float = Field(gt=0, le=10, description="Gumbel-sigmoid temperature")
    gate_bias: float = Field(ge=-10, le=10, description="initial gate logit (positive: components start open)")
    gate_lr_mult: float = Field(gt=0, le=100, description="the gate weights' learning rate, as a multiple of lr")


class TrainStep(Strict):
    width: int = Field(ge=4, le=128, description="U-Net width (channels of the first block; a multiple of 4 for GroupNorm)")
    pretrain: Loop
    adapt: AdaptParams

    @field_validator("width")
    @classmethod
    def _groups(cls, v: int) -> int:
        if v % 4:
            raise ValueError(f"width must be a multiple of 4 (GroupNorm with 4 groups), got {v}")
        return v


class EvaluateStep(Strict):
    threshold: float = Field(gt=0, lt=1, description="probability above which a pixel is foreground")
    batch: int = Field(ge=1, description="images per forward pass at test")


class GaraSamParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep


PARAMS = GaraSamParams
