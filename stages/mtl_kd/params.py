"""Typed parameters of the mtl_kd study (stages/mtl_kd/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

KNOWN = ("cvrp", "ovrp", "vrptw", "ovrptw")


class PrepareStep(Strict):
    n: int = Field(ge=5, le=200, description="customers of the training and seen-size test instances")
    n_large: int = Field(ge=5, le=1000, description="customers of the size-generalisation test instances")
    test_count: int = Field(ge=2, description="test instances per variant at n")
    large_count: int = Field(ge=2, description="test instances per variant at n_large")
    seen: list[str] = Field(min_length=2, description="variants with a teacher (trained on)")
    unseen: list[str] = Field(min_length=1, description="variants tested zero-shot")
    pyvrp_iterations: int = Field(ge=1, description="HGS iterations per instance at n (the reference)")
    pyvrp_iterations_large: int = Field(ge=1, description="HGS iterations per instance at n_large")

    @model_validator(mode="after")
    def _variants(self) -> "PrepareStep":
        for v in self.seen + self.unseen:
            if v not in KNOWN:
                raise ValueError(f"variant {v!r} is not one of {list(KNOWN)}")
        if set(self.seen) & set(self.unseen):
            raise ValueError(f"seen {self.seen} and unseen {self.unseen} variants overlap")
        if self.n_large < self.n:
            raise ValueError(f"n_large ({self.n_large}) must be >= n ({self.n})")
        return self


class NetParams(Strict):
    dim: int = Field(ge=8, le=512, description="embedding size")
    layers: int = Field(ge=1, le=12, description="attention layers (encoder for a teacher, decoder for the student)")
    heads: int = Field(ge=1, le=16, description="attention heads")
    steps: int = Field(ge=1, description="optimiser steps")
    batch: int = Field(ge=2, description="instances per step (per variant for the student)")
    lr: float = Field(gt=0, le=1, description="Adam learning rate")

    @model_validator(mode="after")
    def _heads_divide(self) -> "NetParams":
        if self.dim % self.heads:
            raise ValueError(f"dim ({self.dim}) must be a multiple of heads ({self.heads})")
        return self


class StudentParams(NetParams):
    states_per_variant: int = Field(ge=8, description="teacher-visited states a step distils, per variant")


class ControlParams(Strict):
    """The RL-only multi-task model (the musts' control): the teachers' light-decoder net trained
    by REINFORCE on batches holding every seen variant, with the distilled student's whole
    training budget (its teachers' and its own)."""
    steps: int = Field(ge=1, description="REINFORCE steps: the teachers' steps together plus the student's")
    batch: int = Field(ge=2, description="instances per step, the same number of each seen variant")
    lr: float = Field(gt=0, le=1, description="Adam learning rate (searched on calibration seeds as the student's)")


class TrainStep(Strict):
    starts: int = Field(ge=1, description="POMO starts of every training rollout (teachers, the teachers' "
                                          "rollouts that the student distils, the control); inference uses n")
    teacher: NetParams
    student: StudentParams
    rl_mtl: ControlParams


class EvaluateStep(Strict):
    r3c_rounds: int = Field(ge=1, description="R3C re-construction rounds")
    r3c_segment: float = Field(gt=0, le=1, description="R3C's most customers re-built at once, as a fraction of n")


class MtlKdParams(Strict):
    prepare: PrepareStep
    train: TrainStep
    evaluate: EvaluateStep

    @model_validator(mode="after")
    def _control_budget(self) -> "MtlKdParams":
        """The RL-only control gets the distilled student's whole training budget: as many
        optimiser steps as the teachers and the student together, and as many training instances
        (each rolled out from ``train.starts`` starts) as the teachers' REINFORCE and the
        student's distillation drew together."""
        t, s, c, k = self.train.teacher, self.train.student, self.train.rl_mtl, len(self.prepare.seen)
        if self.train.starts > self.prepare.n:
            raise ValueError(f"train.starts ({self.train.starts}) must be at most n ({self.prepare.n})")
        if c.batch % k:
            raise ValueError(f"train.rl_mtl.batch ({c.batch}) must hold the same number of each of the "
                             f"{k} seen variants")
        steps = k * t.steps + s.steps
        instances = k * (t.steps * t.batch + s.steps * s.batch)
        if c.steps != steps or c.steps * c.batch != instances:
            raise ValueError(f"train.rl_mtl must get the distilled student's whole budget: {steps} steps "
                             f"({k} x {t.steps} teacher + {s.steps} student) and {instances} instances "
                             f"({k} x ({t.steps} x {t.batch} + {s.steps} x {s.batch})), got {c.steps} steps "
                             f"of {c.batch} = {c.steps * c.batch}")
        return self


PARAMS = MtlKdParams
