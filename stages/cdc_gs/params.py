"""Typed parameters of the cdc_gs study (stages/cdc_gs/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from stages.common.runtime.params import Strict

# images scikit-image ships (skimage.data), offline
SKIMAGE_IMAGES = ("camera", "astronaut", "coffee", "chelsea", "rocket", "coins", "moon", "brick", "grass",
                  "gravel", "text", "page", "horse")


class PrepareStep(Strict):
    images: list[str] = Field(min_length=1, description="skimage.data images, centre-cropped to a square, grey")
    size: int = Field(ge=8, le=512, description="side of the square the images are resized to, pixels")
    wavelet: str = Field(description="PyWavelets wavelet of the complexity map (pywt.wavedec2)")
    wavelet_levels: int = Field(ge=1, le=6, description="wavedec2 levels whose detail energy is summed")

    @field_validator("images")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        bad = [k for k in v if k not in SKIMAGE_IMAGES]
        if bad or len(set(v)) != len(v):
            raise ValueError(f"images must be distinct names of {list(SKIMAGE_IMAGES)}, got {v}")
        return v

    @field_validator("wavelet")
    @classmethod
    def _wavelet(cls, v: str) -> str:
        import pywt

        if v not in pywt.wavelist(kind="discrete"):
            raise ValueError(f"wavelet must be a discrete PyWavelets wavelet (pywt.wavelist(kind='discrete')), got {v!r}")
        return v


class TrainStep(Strict):
    counts: list[int] = Field(min_length=1, description="final primitive counts (both methods), increasing")
    main_count: int = Field(ge=8, description="the count the claims compare at (one of counts)")
    init_fraction: float = Field(gt=0, le=1, description="initial count as a fraction of the final count")
    steps: int = Field(ge=10, description="Adam steps per fit")
    densify_from: int = Field(ge=1, description="first densification step")
    densify_every: int = Field(ge=1, description="steps between densification events")
    densify_until: int = Field(ge=1, description="last step densification may run at")
    lr_mu: float = Field(gt=0, description="Adam learning rate of the means (pixels)")
    lr_scale: float = Field(gt=0, description="Adam learning rate of the log-scales")
    lr_theta: float = Field(gt=0, description="Adam learning rate of the rotations (radians)")
    lr_color: float = Field(gt=0, description="Adam learning rate of the colours")
    lr_opacity: float = Field(gt=0, description="Adam learning rate of the opacity logits")
    clone_max_scale: float = Field(gt=0, description="clone a primitive whose larger scale is at most this (pixels), else split it")
    min_opacity: float = Field(ge=0, lt=1, description="prune below this opacity (both methods)")
    cdc_densify_fraction: float = Field(ge=0, le=0.5, description="CDC: share of the count densified by consistency per event")
    cdc_prune_fraction: float = Field(ge=0, le=0.5, description="CDC: share of the count pruned by consistency per event")
    fit_batch: int = Field(ge=1, description="fits run in lockstep as one batch (a leading fit dimension: the seeds "
                                             "and arms of an image); 1 runs them one after another. Every fit's "
                                             "figures are the same either way (tested); it sets only the speed")

    @field_validator("counts")
    @classmethod
    def _increasing(cls, v: list[int]) -> list[int]:
        if any(b <= a for a, b in zip(v, v[1:])) or v[0] < 8:
            raise ValueError(f"counts must be >= 8 and strictly increasing, got {v}")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "TrainStep":
        if self.main_count not in self.counts:
            raise ValueError(f"main_count ({self.main_count}) must be one of counts {self.counts}")
        if not self.densify_from < self.densify_until < self.steps:
            raise ValueError(f"need densify_from < densify_until < steps, got {self.densify_from}, "
                             f"{self.densify_until}, {self.steps}")
        return self


class EvaluateStep(Strict):
    hf_quantile: float = Field(gt=0, lt=1, description="high-frequency pixels: complexity above this quantile")
    grid_images: int = Field(ge=1, description="images (rows) in the picture grid")


class CdcGsParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep


PARAMS = CdcGsParams
