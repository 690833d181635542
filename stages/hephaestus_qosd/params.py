"""Typed parameters of the hephaestus_qosd study (stages/hephaestus_qosd/params.json, three profiles)."""
from __future__ import annotations

from pydantic import Field, field_validator

from stages.common.runtime.params import Strict

COST_KINDS = ("linear", "quadratic", "fixed_charge")


class PrepareStep(Strict):
    n_nodes: int = Field(ge=6, le=2000, description="nodes per graph (about; a grid rounds it)")
    n_train: int = Field(ge=1, description="training graphs per family (grid, Erdos-Renyi, Waxman)")
    n_test: int = Field(ge=2, description="test graphs per family")
    tau: float = Field(gt=1.0, le=5.0, description="threshold T = tau * d(s, t)")
    costs: list[str] = Field(min_length=1, description="edge cost kinds, each graph is solved under each")

    @field_validator("costs")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        bad = [k for k in v if k not in COST_KINDS]
        if bad or len(set(v)) != len(v):
            raise ValueError(f"costs must be distinct kinds of {list(COST_KINDS)}, got {v}")
        if not {"quadratic", "fixed_charge"} <= set(v):
            raise ValueError(f"costs must include the non-linear kinds quadratic and fixed_charge, got {v}")
        return v


class ForgeParams(Strict):
    step_frac: float = Field(gt=0, le=1, description="path stressing: largest raise per step on convex costs, as a fraction of T")
    credit: float = Field(ge=0, le=1, description="path stressing: credit per unit of raise that does not lift d(s,t) now")


class TrainStep(Strict):
    label_tries: int = Field(ge=0, description="local-search restarts that refine each Forge solution into a training label")
    n_components: int = Field(ge=1, le=16, description="conditional VAEs in the mixture")
    latent: int = Field(ge=1, le=64, description="latent size of each CVAE")
    hidden: int = Field(ge=4, le=1024, description="hidden units of the encoders, decoders and gate")
    sigma_x: float = Field(gt=0, description="decoder scale (on delta / T)")
    lr: float = Field(gt=0, lt=1, description="Adam learning rate")
    steps: int = Field(ge=1, description="Adam steps")
    batch: int = Field(ge=8, description="rows (edges) per step")


class RefineParams(Strict):
    iterations: int = Field(ge=1, description="REINFORCE updates per test instance")
    batch: int = Field(ge=2, description="latent samples per update")
    sigma0: float = Field(gt=0, description="initial policy scale in latent space")
    sigma_decay: float = Field(gt=0, le=1, description="policy scale factor per update")
    lr: float = Field(gt=0, description="step size on the policy mean (standardised advantages)")


class EvaluateStep(Strict):
    refine: RefineParams
    milp_time_limit: float = Field(gt=0, description="HiGHS time limit per instance, seconds")
    milp_max_nodes: int = Field(ge=2, description="solve the exact model only on graphs with at most this many nodes")


class HephaestusQosdParams(Strict):
    prepare: PrepareStep
    forge: ForgeParams
    train: TrainStep
    evaluate: EvaluateStep


PARAMS = HephaestusQosdParams
