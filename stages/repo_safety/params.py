"""Typed parameters of the repo_safety study (one section per step; see params.json)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

Fraction = Annotated[float, Field(ge=0.01, le=0.9)]


class PrepareParams(Strict):
    n_prompts: int = Field(ge=10, le=100_000, description="prompts (contexts) of each bandit instance")
    n_responses: int = Field(ge=2, le=64, description="candidate responses per prompt")
    fractions: list[Fraction] = Field(min_length=1, max_length=12,
                                      description="the sweep: share f of harmful prompts, one instance each")
    kl_beta: float = Field(gt=0, le=10.0, description="KL coefficient beta to the uniform reference policy "
                                                      "(every policy maximises helpfulness - beta KL)")
    budget: float = Field(ge=-1.0, le=1.0, description="cost budget b: expected constraint mean_x J_c(x) <= b, "
                                                       "per-prompt constraint J_c(x) <= b")
    correlation_target: float = Field(gt=0, lt=1, description="harmful prompts: correlation of cost with "
                                                              "helpfulness the generator aims at")
    correlation_range: list[float] = Field(min_length=2, max_length=2,
                                           description="[low, high]: an instance whose measured within-prompt "
                                                       "correlation on harmful prompts falls outside is regenerated")
    harmful_cost_mean: float = Field(ge=-2.0, le=5.0, description="mean cost of a harmful prompt's responses")
    harmful_cost_scale: float = Field(gt=0, le=5.0, description="spread of a harmful prompt's response costs")
    benign_cost_mean: float = Field(ge=-5.0, le=5.0, description="mean cost of a benign prompt's responses")
    benign_cost_scale: float = Field(gt=0, le=5.0, description="spread of a benign prompt's response costs")
    benign_prompt_scale: float = Field(ge=0, le=5.0, description="spread of the benign prompts' mean costs")
    safe_level: float = Field(ge=0, le=5.0, description="every prompt has a response of cost <= budget - this "
                                                        "(resampled until it does)")
    max_tries: int = Field(ge=1, le=10_000, description="regenerations allowed per instance (invalid: zero "
                                                        "multiplier, correlation out of range)")

    @model_validator(mode="after")
    def _check(self) -> "PrepareParams":
        lo, hi = self.correlation_range
        if not -1 <= lo < hi <= 1:
            raise ValueError(f"correlation_range must be [low, high] with -1 <= low < high <= 1, "
                             f"got {self.correlation_range}")
        if not lo <= self.correlation_target <= hi:
            raise ValueError(f"correlation_target {self.correlation_target} must lie in correlation_range "
                             f"{self.correlation_range}")
        if len(set(self.fractions)) != len(self.fractions):
            raise ValueError(f"fractions must be distinct, got {self.fractions}")
        if any(round(f * self.n_prompts) < 1 for f in self.fractions):
            raise ValueError(f"every fraction must give at least one harmful prompt of n_prompts="
                             f"{self.n_prompts}, got {self.fractions}")
        return self


class SampledParams(Strict):
    steps: int = Field(ge=1, le=1_000_000, description="REINFORCE updates")
    samples_per_prompt: int = Field(ge=2, le=256, description="responses drawn per prompt and update "
                                                              "(leave-one-out baseline needs >= 2)")
    lr: float = Field(gt=0, le=10.0, description="Adam step size on the logits")


class DualParams(Strict):
    update: Literal["log", "additive"] = Field(description="log = safe-rlhf's SGD on log lambda; additive = "
                                                          "projected dual ascent lambda += lr g")
    init: float = Field(ge=0, le=1000.0, description="initial multiplier (safe-rlhf lambda_init)")
    lr: float = Field(gt=0, le=100.0, description="multiplier step size (safe-rlhf lambda_lr)")
    max: float = Field(gt=0, le=1e6, description="cap on the multiplier (safe-rlhf lambda_max)")

    @model_validator(mode="after")
    def _log_needs_positive(self) -> "DualParams":
        if self.update == "log" and self.init <= 0:
            raise ValueError(f"update 'log' needs init > 0 (log lambda), got init={self.init}")
        if self.init > self.max:
            raise ValueError(f"init {self.init} exceeds max {self.max}")
        return self


class TrainParams(Strict):
    steps: int = Field(ge=1, le=1_000_000, description="exact-gradient updates")
    lr: float = Field(gt=0, le=10.0, description="Adam step size on the logits (exact gradients)")
    baseline_dual: DualParams = Field(description="multiplier of the expected-constraint baseline")
    repo_dual: DualParams = Field(description="multiplier of RePO's rectified penalty")
    margin: float = Field(ge=0, le=1.0, description="RePO safety margin m: the penalty is on "
                                                    "max(0, J_c(x) - budget + m) per prompt")
    tightened_share: float = Field(ge=0, lt=1, description="control arm of the helpfulness must: the expected "
                                   "constraint tightened until at most this share of prompts violate their own budget "
                                   "(the safety the must repo_per_prompt_safe asks of RePO)")
    sampled: SampledParams
    log_every: int = Field(ge=1, le=100_000, description="record the training curves every this many updates")


class EvaluateParams(Strict):
    primary_fraction: Fraction = Field(description="the f whose results the claims read (one of "
                                                   "prepare.fractions)")


class RepoSafetyParams(Strict):
    prepare: PrepareParams
    train: TrainParams
    evaluate: EvaluateParams

    @model_validator(mode="after")
    def _primary_in_sweep(self) -> "RepoSafetyParams":
        if self.evaluate.primary_fraction not in self.prepare.fractions:
            raise ValueError(f"evaluate.primary_fraction {self.evaluate.primary_fraction} must be one of "
                             f"prepare.fractions {self.prepare.fractions}")
        return self


PARAMS = RepoSafetyParams
