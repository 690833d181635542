"""Typed parameters of the autosep study (stages/autosep/params.json, three profiles)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict


class PrepareStep(Strict):
    pretrain_frac: float = Field(gt=0, lt=0.5, description="share of each digit class kept for the black box's pre-training (its class prototypes), disjoint from the study's images")
    n_unlabelled: int = Field(ge=3, le=80, description="unlabelled images per class of a group (the paper's n_train: 30)")
    repeats: int = Field(ge=1, le=100, description="independent unlabelled/test draws of every group")


class BlackboxParams(Strict):
    block: Literal[1, 2, 4, 8] = Field(description="the unguided look's average-pooling block (pixels); 4 = coarse")
    look_noise: float = Field(ge=0, le=1, description="noise of the unguided look")
    read_noise: float = Field(ge=0, le=1, description="noise of a description's pixel reading")
    levels: int = Field(ge=2, le=17, description="levels a description quantises a pixel to")
    compare_noise: float = Field(gt=0, le=100, description="noise of the re-reading in an instance comparison")
    desc_weight: float = Field(ge=0, le=1, description="weight of the description against the coarse look")


class SearchParams(Strict):
    m: int = Field(ge=2, le=32, description="pixels a description prompt names")
    rounds: int = Field(ge=1, le=50, description="beam-search rounds (paper 6)")
    beam: int = Field(ge=1, le=20, description="beam width (paper 4)")
    n_grad: int = Field(ge=1, le=20, description="error-driven edits per prompt and round (paper: 4 gradients)")
    paraphrases: int = Field(ge=0, le=10, description="random swaps per prompt and round (paper: 1 synonym)")
    minibatch: int = Field(ge=2, le=1000, description="comparisons (or classifications) an edit samples its failures from (paper 50)")
    max_expand: int = Field(ge=1, le=20, description="beam prompts expanded per round (paper 5)")
    pairs_per_image: int = Field(ge=1, le=10, description="other images each unlabelled image is compared with (paper 2)")
    label_edit: Literal["prototype", "pair"] = Field(description="the label-based baselines' edits: 'prototype' uses the black box's class knowledge, 'pair' only image pairs (as AutoSEP's)")
    votes: int = Field(ge=1, le=25, description="majority-vote samples (paper 5)")
    vote_noise: float = Field(ge=0, le=1, description="look noise of a majority-vote sample (a temperature)")
    kmeans_k: int = Field(ge=2, le=30, description="k-means clusters (paper 7)")


class AblationParams(Strict):
    finer_block: Literal[1, 2] = Field(description="the finer unguided look of the 'finer_look' control")
    blind_compare_noise: float = Field(gt=0, le=1000, description="comparison noise of the 'blind_score' control (a score that sees nothing)")


class TrainStep(Strict):
    blackbox: BlackboxParams
    search: SearchParams
    generic_rule: Literal["ink", "variance"] = Field(description="how the generic starting prompt picks its pixels")
    ablations: AblationParams


class EvaluateStep(Strict):
    n_random: int = Field(ge=3, le=500, description="random prompts in the score/accuracy rank correlation")


class AutosepParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep

    @model_validator(mode="after")
    def _sizes_fit(self) -> "AutosepParams":
        s = self.train.search
        if s.m >= 64 // 2:
            raise ValueError(f"train.search.m ({s.m}) must be < 32, half the 64 pixels, so that a swap has room")
        if self.train.ablations.finer_block >= self.train.blackbox.block:
            raise ValueError(f"train.ablations.finer_block ({self.train.ablations.finer_block}) must be finer (smaller) "
                             f"than train.blackbox.block ({self.train.blackbox.block})")
        if self.train.ablations.blind_compare_noise <= self.train.blackbox.compare_noise:
            raise ValueError(f"train.ablations.blind_compare_noise ({self.train.ablations.blind_compare_noise}) must exceed "
                             f"train.blackbox.compare_noise ({self.train.blackbox.compare_noise})")
        return self


PARAMS = AutosepParams
