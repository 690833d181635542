"""Typed parameters of the diff_purify study (stages/diff_purify/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict


class PrepareStep(Strict):
    test_fraction: float = Field(gt=0.05, lt=0.9, description="share of the 1797 digits held out for testing (stratified)")


class TrainStep(Strict):
    clf_hidden: int = Field(ge=8, le=4096, description="hidden units of the MLP classifier (two layers)")
    clf_steps: int = Field(ge=1, description="Adam steps of the classifier")
    score_hidden: int = Field(ge=8, le=4096, description="hidden units of each score network (three layers)")
    score_steps: int = Field(ge=1, description="Adam steps of each score network (denoising score matching)")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate of every network")
    batch: int = Field(ge=8, description="examples per step")
    prior_sigmas: list[float] = Field(min_length=2, max_length=2, description="[min, max] noise level of the prior's training")
    pert_sigmas: list[float] = Field(min_length=2, max_length=2, description="[min, max] noise level of the perturbation score's training")
    pert_eps: list[float] = Field(min_length=1, description="L_inf radii of the PGD examples of the training set the perturbation score learns")
    pert_pgd_steps: int = Field(ge=1, description="PGD steps for those training examples")
    control: bool = Field(description="also train the control: a perturbation score on random sign noise of the same radii")

    @model_validator(mode="after")
    def _sigmas(self) -> "TrainStep":
        for key in ("prior_sigmas", "pert_sigmas"):
            lo, hi = getattr(self, key)
            if not 0 < lo <= hi:
                raise ValueError(f"{key} must be [min, max] with 0 < min <= max, got {[lo, hi]}")
        if any(not 0 < e <= 0.5 for e in self.pert_eps):
            raise ValueError(f"pert_eps must lie in (0, 0.5], got {self.pert_eps}")
        return self


class PurifyParams(Strict):
    steps: int = Field(ge=1, le=1000, description="purification steps")
    sigma_max: float = Field(gt=0, description="noise level of the first step")
    sigma_min: float = Field(gt=0, description="noise level of the last step (geometric in between)")
    eta: float = Field(gt=0, le=1, description="step size on the denoised direction")
    lam: float = Field(ge=0, description="weight of the perturbation score (AAOpt); the prior-only defence uses 0")
    control_lam: float = Field(ge=0, description="weight of the control's perturbation score (learnt from random sign noise), tuned as lam was")
    pert_sigma: float = Field(gt=0, description="noise level at which the perturbation score is read")

    @model_validator(mode="after")
    def _order(self) -> "PurifyParams":
        if self.sigma_min > self.sigma_max:
            raise ValueError(f"sigma_min ({self.sigma_min}) must be <= sigma_max ({self.sigma_max})")
        return self


class EvaluateStep(Strict):
    eps: list[float] = Field(min_length=1, description="L_inf attack radii on [0, 1] pixels, increasing")
    main_eps: float = Field(gt=0, description="the radius the claims read (one of eps)")
    small_eps: float = Field(gt=0, description="the smaller radius of the should on prior-only vs no defence (one of eps)")
    n_attack: int = Field(ge=10, description="test examples attacked (the first n of the test split)")
    pgd_steps: int = Field(ge=1, description="PGD steps against the undefended classifier")
    bpda_steps: int = Field(ge=1, description="BPDA+EOT steps against each purified pipeline")
    eot: int = Field(ge=1, description="purifier draws averaged per BPDA gradient")
    check_every: int = Field(ge=0, description="BPDA: also judge the defended prediction every this many steps (0: only at the end)")
    defence_reps: int = Field(ge=1, description="purifier draws whose logits are averaged for a defended prediction")
    level: float = Field(gt=0.5, lt=1, description="confidence level of the intervals over test examples")
    grid: int = Field(ge=1, le=32, description="test examples shown in the grid of images")

    @model_validator(mode="after")
    def _eps(self) -> "EvaluateStep":
        if any(b <= a for a, b in zip(self.eps, self.eps[1:])) or self.eps[0] <= 0 or self.eps[-1] > 0.5:
            raise ValueError(f"eps must be increasing in (0, 0.5], got {self.eps}")
        for key in ("main_eps", "small_eps"):
            if getattr(self, key) not in self.eps:
                raise ValueError(f"{key} ({getattr(self, key)}) must be one of eps {self.eps}")
        return self


class DiffPurifyParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    purify: PurifyParams
    evaluate: EvaluateStep


PARAMS = DiffPurifyParams
