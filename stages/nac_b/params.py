"""Typed parameters of the nac_b study (one section per step; see params.json)."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

Step = Annotated[float, Field(gt=0, le=100)]


class MDPParams(Strict):
    n_transient: int = Field(ge=1, le=50, description="transient states feeding the recurrent class")
    period: int = Field(ge=1, le=12, description="period of the recurrent class (number of phases)")
    states_per_phase: int = Field(ge=1, le=50, description="recurrent states in each phase")
    n_actions: int = Field(ge=2, le=10, description="actions in every state")
    concentration: float = Field(gt=0, le=100, description="Dirichlet concentration of the transition laws")
    transient_stay: float = Field(ge=0, lt=1, description="largest share of a transient state's mass kept on "
                                                          "transient states")
    phase_amplitude: float = Field(ge=0, le=1, description="reward added on even phases (0 on odd ones): "
                                                           "rewards alternating by phase; 0 = none")
    action_reward_scale: float = Field(gt=0, le=1, description="action-dependent reward part, scale * U(0, 1)")

    @model_validator(mode="after")
    def _rewards_in_unit_interval(self) -> "MDPParams":
        if self.phase_amplitude + self.action_reward_scale > 1:
            raise ValueError(f"phase_amplitude + action_reward_scale must be <= 1 (rewards in [0, 1]), got "
                             f"{self.phase_amplitude} + {self.action_reward_scale}")
        return self


class PrepareParams(Strict):
    regret_mdp: MDPParams = Field(description="the MDP of the regret-vs-T sweep")
    batching_mdp: MDPParams = Field(description="the MDP of the batching check: period 3-4, rewards alternating "
                                                "by phase; its control is the same MDP with phase_amplitude 0")
    rvi_tau: float = Field(gt=0, lt=1, description="aperiodicity transform P_tau = tau I + (1 - tau) P for RVI")
    rvi_tol: float = Field(gt=0, le=1e-6, description="RVI stops when span(T h - h) < this")
    max_policies_checked: int = Field(ge=1, le=1_000_000, description="deterministic policies whose chain is "
                                                                      "checked for one recurrent class and its period")

    @model_validator(mode="after")
    def _batching_mdp_is_periodic(self) -> "PrepareParams":
        b = self.batching_mdp
        if b.period < 3 or b.phase_amplitude <= 0:
            raise ValueError(f"batching_mdp must have period >= 3 and phase_amplitude > 0 (a periodic MDP where "
                             f"periodicity hurts), got period {b.period}, phase_amplitude {b.phase_amplitude}")
        if self.regret_mdp.period < 2:
            raise ValueError(f"regret_mdp.period must be >= 2 (a periodic recurrent class), got "
                             f"{self.regret_mdp.period}")
        return self


class RegretSweep(Strict):
    T_grid: list[Annotated[int, Field(ge=100, le=100_000_000)]] = Field(
        min_length=3, description="horizons T of the regret sweep (strictly increasing)")
    runs: int = Field(ge=2, le=10_000, description="independent runs per verdict seed of NAC-B (and of each "
                                                   "learning control arm) at each T")
    baseline_runs: int = Field(ge=1, le=10_000, description="runs per verdict seed of the uniform and the optimal "
                                                            "policy at each T")
    batch_size: int = Field(ge=1, le=10_000, description="B, transitions averaged in each critic / NPG step")
    actor_step: Step = Field(description="alpha, actor step theta += alpha * omega")
    critic_step: Step = Field(description="beta, critic (average-reward TD(0)) step")
    npg_step: Step = Field(description="gamma, SGD step of the natural-gradient estimate")
    plain_actor_step: Step = Field(description="alpha of the plain actor-critic arm (policy-gradient actor, no "
                                               "natural gradient, batch 1), chosen on calibration seeds")
    checkpoints: int = Field(ge=2, le=1000, description="log-spaced times where the largest-T runs record "
                                                        "cumulative reward and policy")

    @model_validator(mode="after")
    def _increasing(self) -> "RegretSweep":
        if sorted(set(self.T_grid)) != list(self.T_grid):
            raise ValueError(f"T_grid must be strictly increasing, got {self.T_grid}")
        return self


class BatchingSweep(Strict):
    T: int = Field(ge=100, le=100_000_000, description="sample budget (horizon) of every batching run")
    batch_sizes: list[Annotated[int, Field(ge=1, le=10_000)]] = Field(
        min_length=2, description="batch sizes compared; must include 1 and at least one > 1")
    steps: list[Step] = Field(min_length=2, description="shared step (alpha = beta = gamma) grid, increasing")
    tune_runs: int = Field(ge=1, le=10_000, description="runs per verdict seed and (batch, step) used to pick each "
                                                        "batch's step")
    eval_runs: int = Field(ge=2, le=10_000, description="fresh runs per verdict seed and configuration at the "
                                                        "picked steps")

    @model_validator(mode="after")
    def _grid(self) -> "BatchingSweep":
        if sorted(set(self.batch_sizes)) != list(self.batch_sizes) or self.batch_sizes[0] != 1:
            raise ValueError(f"batch_sizes must be strictly increasing and start at 1, got {self.batch_sizes}")
        if sorted(set(self.steps)) != list(self.steps):
            raise ValueError(f"steps must be strictly increasing, got {self.steps}")
        return self


class TrainParams(Strict):
    regret: RegretSweep
    batching: BatchingSweep
    epochs_scale: float = Field(gt=0, le=100, description="K = ceil(epochs_scale * T^epochs_exponent) actor steps")
    epochs_exponent: float = Field(gt=0, le=1, description="K = ceil(epochs_scale * T^epochs_exponent) actor steps")
    clip: float = Field(ge=10, le=1e12, description="parameters are clipped to +-clip; reaching it = diverged")


class EvaluateParams(Strict):
    n_boot: int = Field(ge=100, le=100_000, description="bootstrap resamples (over runs) of each interval")
    ci_level: float = Field(gt=0.5, lt=1, description="confidence level of the intervals")


class NacBParams(Strict):
    prepare: PrepareParams
    train: TrainParams
    evaluate: EvaluateParams


PARAMS = NacBParams
