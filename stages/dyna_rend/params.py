"""Typed parameters of the dyna_rend study (stages/dyna_rend/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from stages.common.runtime.params import Strict

ARMS = ("none", "mae2d", "vidpred2d", "recon3d", "dynarend", "dynarend_blind")
NEEDED = ("none", "dynarend", "dynarend_blind")
CAMERAS = ("top", "x+", "x-", "y+", "y-")


class PrepareStep(Strict):
    grid: list[int] = Field(min_length=3, max_length=3, description="voxels along x, y, z (z: height)")
    n_blocks: int = Field(ge=2, le=5, description="coloured blocks per scene (distinct colours of the 5-colour palette)")
    stack_p: float = Field(ge=0, le=1, description="probability that a block (after the first two) is stacked")
    n_pretrain: int = Field(ge=8, description="unlabelled push videos (views, push instruction, future views) for pre-training, per seed")
    n_demos: int = Field(ge=4, description="labelled stacking demonstrations for fine-tuning, per seed")
    n_test: int = Field(ge=10, description="test scenes per condition (in distribution, each perturbation, and held-out push scenes), per seed")
    lighting: float = Field(gt=0, lt=1, description="colour factor of the lighting perturbation")

    @field_validator("grid")
    @classmethod
    def _grid(cls, v: list[int]) -> list[int]:
        if not (4 <= v[0] <= 64 and 4 <= v[1] <= 64 and 3 <= v[2] <= 32):
            raise ValueError(f"grid must be [x, y, z] with 4 <= x, y <= 64 and 3 <= z <= 32, got {v}")
        return v

    @model_validator(mode="after")
    def _room(self) -> "PrepareStep":
        if self.n_blocks + 2 > self.grid[0] * self.grid[1] // 2:
            raise ValueError(f"n_blocks + 2 distractors ({self.n_blocks + 2}) need a table of at least twice as many "
                             f"cells; grid {self.grid[:2]} has {self.grid[0] * self.grid[1]}")
        return self


class TrainStep(Strict):
    arms: list[str] = Field(min_length=3, description="pre-training arms; must include none, dynarend and dynarend_blind (the control)")
    cams_in: list[str] = Field(min_length=1, description="input cameras; the others are held-out render targets")
    channels: int = Field(ge=2, le=256, description="feature channels of the 2-D and 3-D CNNs")
    pretrain_steps: int = Field(ge=1, description="Adam steps of every pre-training arm")
    batch: int = Field(ge=2, description="scenes per pre-training step")
    lr: float = Field(gt=0, lt=1, description="pre-training learning rate")
    mask_ratio: float = Field(ge=0, lt=1, description="fraction of input-view patches masked in pre-training")
    patch: int = Field(ge=1, le=8, description="mask patch side, pixels")
    finetune_steps: int = Field(ge=1, description="behaviour-cloning steps on the demos (every arm)")
    finetune_batch: int = Field(ge=2, description="demos per fine-tuning step")
    finetune_lr: float = Field(gt=0, lt=1, description="fine-tuning learning rate")

    @field_validator("arms")
    @classmethod
    def _arms(cls, v: list[str]) -> list[str]:
        bad = [a for a in v if a not in ARMS]
        if bad or len(set(v)) != len(v) or not set(NEEDED) <= set(v):
            raise ValueError(f"arms must be distinct names of {list(ARMS)} including {', '.join(NEEDED)}, got {v}")
        return v

    @field_validator("cams_in")
    @classmethod
    def _cams(cls, v: list[str]) -> list[str]:
        bad = [c for c in v if c not in CAMERAS]
        if bad or len(set(v)) != len(v) or len(v) >= len(CAMERAS):
            raise ValueError(f"cams_in must be distinct cameras of {list(CAMERAS)}, leaving at least one held out, got {v}")
        return v


class EvaluateStep(Strict):
    chunk: int = Field(ge=1, description="test scenes per forward pass")


class DynaRendParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep


PARAMS = DynaRendParams
