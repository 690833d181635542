"""Typed parameters of the jsp_multipolicy study (stages/jsp_multipolicy/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict


class PrepareStep(Strict):
    n_test_10: int = Field(ge=2, le=1000, description="random 10x10 job shops in the test set of each verdict seed")
    n_test_15: int = Field(ge=2, le=1000, description="random 15x15 job shops in the test set of each verdict seed")
    n_test_flow: int = Field(ge=2, le=1000, description="random 10x10 flow shops in the test set of each verdict seed")
    cpsat_limit_10: float = Field(gt=0, le=3600, description="CP-SAT deterministic-time limit per 10x10 job shop "
                                  "(one worker); where it stops before a proof the reference is the best-known makespan")
    cpsat_limit_15: float = Field(gt=0, le=3600, description="the same for 15x15 job shops")
    cpsat_limit_flow: float = Field(gt=0, le=3600, description="the same for 10x10 flow shops")
    workers: int = Field(ge=1, le=2, description="CP-SAT processes (map_isolated); at most 2 on this machine")


class L2DStep(Strict):
    updates: int = Field(ge=1, le=100_000, description="PPO updates of the L2D baseline")
    episodes: int = Field(ge=2, le=4096, description="fresh random training shops an update, one episode each "
                          "(L2D's num_envs)")
    hidden: int = Field(ge=4, le=1024, description="width of L2D's GIN (64 in L2D)")
    hidden_head: int = Field(ge=4, le=1024, description="width of L2D's actor and critic MLPs (32 in L2D)")
    lr: float = Field(gt=0, le=0.1, description="Adam learning rate of L2D's PPO")


class TrainStep(Strict):
    steps: int = Field(ge=1, le=100_000, description="gradient steps, the same for the three self-labelled arms")
    instances: int = Field(ge=1, le=1024, description="random training shops a step")
    samples: int = Field(ge=2, le=1024, description="sampled schedules per shop a step (split over the K policies)")
    n_jobs: int = Field(ge=2, le=50, description="training shop size: jobs")
    n_machines: int = Field(ge=2, le=50, description="training shop size: machines")
    hidden: int = Field(ge=4, le=1024, description="width of the network")
    lr: float = Field(gt=0, le=0.1, description="Adam learning rate")
    n_policies: int = Field(ge=2, le=64, description="K, policies of the multi-policy network")
    tau: float = Field(gt=0, description="temperature of the adaptive imitation intensity exp(-gap / tau) (.inf: "
                       "uniform)")
    l2d: L2DStep


class EvaluateStep(Strict):
    samples: int = Field(ge=1, le=4096, description="sampled schedules per test instance, for every method")
    ci_level: float = Field(gt=0.5, lt=1, description="level of the within-seed paired t-intervals over the test "
                            "shops (context; the verdicts are the ledger's, over the seeds)")


class JspMultipolicyParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep

    @model_validator(mode="after")
    def _budgets_split(self) -> "JspMultipolicyParams":
        K = self.train.n_policies
        for key, v in (("train.samples", self.train.samples), ("evaluate.samples", self.evaluate.samples)):
            if v % K:
                raise ValueError(f"{key} ({v}) must be a multiple of train.n_policies ({K}): every policy gets "
                                 f"the same share of the sampling budget")
        return self


PARAMS = JspMultipolicyParams
