"""Typed parameters of the escort_belief study (one section per step; see params.json)."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

Pos = Annotated[float, Field(gt=0, le=1000)]


class MixtureParams(Strict):
    modes: int = Field(ge=1, le=10, description="Gaussian modes of the initial belief")
    separation: Pos = Field(description="distance of each mode's mean from the origin")
    cov_min: Pos = Field(description="smallest eigenvalue of each mode's covariance")
    cov_max: Pos = Field(description="largest eigenvalue of each mode's covariance (random rotation: correlated)")
    angle: float = Field(ge=0, le=3.1416, description="rotation per step in each coordinate plane (mode drift), rad")
    drift: float = Field(ge=0, le=100, description="norm of the constant drift u added every step")
    q: Pos = Field(description="transition noise std")
    r: Pos = Field(description="observation noise std")
    obs_frac: float = Field(gt=0, le=1, description="share of coordinates observed (the first ceil(obs_frac d))")

    @model_validator(mode="after")
    def _cov_order(self) -> "MixtureParams":
        if self.cov_min > self.cov_max:
            raise ValueError(f"cov_min must be <= cov_max, got {self.cov_min} > {self.cov_max}")
        return self


class PrepareParams(Strict):
    dims: list[Annotated[int, Field(ge=1, le=100)]] = Field(min_length=1, description="state dimensions d")
    reps: int = Field(ge=2, le=100, description="independent replications (model, trajectory) per dimension "
                      "and verdict seed")
    reps_dmax: int | None = Field(default=None, ge=2, le=500, description="replications per verdict seed at the "
                                  "largest dimension (the must row's d; issue 20); default: reps")
    steps: int = Field(ge=1, le=100, description="filtering steps (observations) per replication")
    eval_samples: int = Field(ge=50, le=20_000, description="exact samples of the true belief per step")
    mixture: MixtureParams

    @model_validator(mode="after")
    def _sorted_dims(self) -> "PrepareParams":
        if list(self.dims) != sorted(set(self.dims)):
            raise ValueError(f"dims must be distinct and increasing, got {self.dims}")
        if self.reps_dmax is not None and self.reps_dmax < self.reps:
            raise ValueError(f"reps_dmax must be >= reps, got {self.reps_dmax} < {self.reps}")
        return self

    def reps_at(self, d: int) -> int:
        """Replications at dimension d: ``reps_dmax`` at the largest one (when set), else ``reps``."""
        return self.reps_dmax if (self.reps_dmax is not None and d == max(self.dims)) else self.reps


class EscortParams(Strict):
    lambda_corr: float = Field(ge=0, le=1, description="weight of the correlation-aware sliced Stein term")
    lambda_temp: float = Field(ge=0, le=10, description="weight of the temporal (sliced-W) consistency pull")


class OfficialParams(Strict):
    iters: int = Field(ge=1, le=5000, description="iterations per filtering step of the official-code ESCORT (its default 50)")
    step: Pos = Field(description="its plain gradient step size (its default 0.01)")


class SteinParams(Strict):
    iters: int = Field(ge=1, le=5000, description="Stein iterations per filtering step")
    step: Pos = Field(description="AdaGrad/RMSprop step size of SVGD and ESCORT")
    final_step_frac: float = Field(gt=0, le=1, description="the step decays linearly to step * this")


class LightDarkParams(Strict):
    episodes: int = Field(ge=2, le=100_000, description="episodes per method and verdict seed (same true states "
                          "for every method)")
    particles: int = Field(ge=4, le=10_000, description="particles per belief")
    horizon: int = Field(ge=1, le=1000, description="moves before an undeclared episode ends")
    stein: SteinParams
    x0: float = Field(ge=-100, le=100, description="start x (both modes)")
    y0: float = Field(ge=0, le=100, description="start modes at y = +-y0")
    s0: Pos = Field(description="std of each start mode")
    light_x: float = Field(ge=-100, le=100, description="x of the light (most precise observations)")
    noise_scale: Pos = Field(description="observation std = noise_scale (light_x - x)^2 + noise_min")
    noise_min: Pos = Field(description="observation std at the light")
    q: Pos = Field(description="transition noise std")
    max_step: Pos = Field(description="largest move per step")
    spread_threshold: Pos = Field(description="belief spread sqrt(tr Cov) below which the policy heads to the goal")
    declare_radius: Pos = Field(description="declare when the belief mean is this close to the goal")
    goal_radius: Pos = Field(description="a declaration succeeds when the true state is this close to the goal")
    step_cost: float = Field(ge=0, le=1000, description="cost of every move")
    terminal_reward: Pos = Field(description="+ on a correct declaration, - on a wrong one or none")


class TrainParams(Strict):
    particles: int = Field(ge=4, le=10_000, description="particles per belief on the mixture targets")
    stein: SteinParams
    escort: EscortParams
    escort_official: OfficialParams
    lightdark: LightDarkParams


class EvaluateParams(Strict):
    mmd_scales: list[Pos] = Field(min_length=1, description="MMD bandwidths, as multiples of the exact "
                                  "samples' median pairwise distance")
    sw_projections: int = Field(ge=1, le=100_000, description="random projections of POT's sliced Wasserstein")
    ci_level: float = Field(gt=0.5, lt=1, description="level of the within-seed intervals over replications (t "
                            "for distances, BCa for the ratios at the largest dimension)")
    n_boot: int = Field(default=2000, ge=100, le=100_000, description="resamples of the paired BCa bootstrap "
                        "(stages.common.inference.bootstrap_interval) of each seed's replications for the "
                        "within-seed intervals of the ratios at the largest dimension")
    mmd_fixed_bandwidth: Pos = Field(default=1.0, description="bandwidth of the context MMD with one fixed RBF "
                                     "kernel exp(-|x - y|^2 / (2 s^2)), the official code's compute_mmd (s^2 = 1)")


class EscortBeliefParams(Strict):
    prepare: PrepareParams
    train: TrainParams
    evaluate: EvaluateParams


PARAMS = EscortBeliefParams
