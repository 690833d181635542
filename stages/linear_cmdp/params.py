"""Typed parameters of the linear_cmdp study (one section per step; see params.json)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

Name = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]


class SetupParams(Strict):
    kind: Literal["tabular", "linear"] = Field(description="tabular = one-hot features (d = S*A), "
                                                           "linear = Dirichlet features on d coordinates")
    S: int = Field(ge=2, le=50, description="states")
    A: int = Field(ge=2, le=10, description="actions")
    H: int = Field(ge=2, le=20, description="horizon")
    d: int = Field(ge=1, le=20, description="feature dimension (linear); must be S*A for tabular")
    threshold_scale: float = Field(gt=0, lt=1, description="b = scale * max_pi V_u(pi)")
    instances: int = Field(ge=1, le=100, description="binding instances drawn for this setup")
    max_draws: int = Field(ge=1, le=100_000, description="draws allowed to find them (non-binding "
                                                         "instances are rejected and counted)")

    @model_validator(mode="after")
    def _shape(self) -> "SetupParams":
        if self.kind == "tabular" and self.d != self.S * self.A:
            raise ValueError(f"a tabular setup has one-hot features: d must be S*A = {self.S * self.A}, got {self.d}")
        if self.kind == "linear" and self.threshold_scale < 0.9:
            # STUDIES.md (linear_cmdp): the linear d=2 generator binds rarely below 0.9
            raise ValueError(f"a linear setup needs threshold_scale >= 0.9 (STUDIES.md), got {self.threshold_scale}")
        if self.max_draws < self.instances:
            raise ValueError(f"max_draws ({self.max_draws}) must be >= instances ({self.instances})")
        return self


class PrepareParams(Strict):
    setups: dict[Name, SetupParams] = Field(min_length=1, description="named instance families")
    binding_tol: float = Field(gt=0, le=1e-2, description="binding = unconstrained optimum exceeds the "
                                                          "constrained one by more than this")


class AgentParams(Strict):
    name: Name
    kind: Literal["opse", "ghosh", "dope"] = Field(description="opse = OPSE-LCMDP (the paper), ghosh = "
                                                               "Ghosh et al. style optimistic primal-dual, "
                                                               "dope = DOPE-style tabular extended LP")
    setups: list[Name] = Field(min_length=1, description="setups (prepare.setups) it runs on")
    episodes: int = Field(ge=10, le=1_000_000, description="K, episodes of every run")
    c_r: float = Field(ge=0, le=100, description="reward bonus coefficient (optimism)")
    c_u: float = Field(ge=0, le=100, description="utility bonus coefficient (opse/dope: pessimism, ghosh: optimism)")
    c_d: float = Field(0.0, ge=0, le=100, description="opse: bonus coefficient of the exploration Q_d")
    b_d: float = Field(1.0, ge=0, le=100, description="opse: scale B_d of the exploration reward")
    kappa: float = Field(0.1, gt=0, le=10, description="softmax temperature (official ent_coef)")
    lam_max: float = Field(300.0, gt=0, le=1e6, description="upper end C_lambda of the bisection on lambda")


class TrainParams(Strict):
    agents: list[AgentParams] = Field(min_length=1)
    bisection_steps: int = Field(ge=1, le=60, description="bisection steps on lambda (official: 20)")
    steps_per_pass: int = Field(ge=1, le=8, description="bisection steps replayed from one grid pass "
                                                        "(speed only; the result equals plain bisection)")

    @model_validator(mode="after")
    def _unique(self) -> "TrainParams":
        names = [a.name for a in self.agents]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"agent names must be unique, repeated: {dup}")
        return self


class EvaluateParams(Strict):
    main_agent: Name = Field(description="the paper's algorithm (zero-violation and slope checks)")
    no_pessimism_agent: Name = Field(description="the zero-violation must's control: the main agent with its "
                                     "pessimism taken out (c_u = 0, every other constant the main agent's)")
    primal_dual_agent: Name = Field(description="the baseline that should violate")
    fit_from: float = Field(gt=0, lt=1, description="slope fitted over episodes [fit_from * K, K]")
    violation_tol: float = Field(ge=0, le=1e-3, description="an episode violates when V_u(pi_k) < b - tol")
    n_boot: int = Field(ge=100, le=100_000, description="bootstrap resamples (over instances)")
    ci_level: float = Field(gt=0.5, lt=1, description="confidence level of the intervals")


class LinearCmdpParams(Strict):
    prepare: PrepareParams
    train: TrainParams
    evaluate: EvaluateParams

    @model_validator(mode="after")
    def _references(self) -> "LinearCmdpParams":
        setups = self.prepare.setups
        for a in self.train.agents:
            unknown = [s for s in a.setups if s not in setups]
            if unknown:
                raise ValueError(f"agent {a.name!r}: unknown setups {unknown}; defined: {sorted(setups)}")
            if a.kind == "dope" and any(setups[s].kind != "tabular" for s in a.setups):
                raise ValueError(f"agent {a.name!r}: dope is tabular only, got setups {a.setups}")
        kinds = {a.name: a.kind for a in self.train.agents}
        for key, want in (("main_agent", "opse"), ("no_pessimism_agent", "opse"), ("primal_dual_agent", "ghosh")):
            name = getattr(self.evaluate, key)
            if kinds.get(name) != want:
                raise ValueError(f"evaluate.{key} = {name!r} must name a train agent of kind {want!r}; "
                                 f"agents: {kinds}")
        by_name = {a.name: a for a in self.train.agents}
        main, abl = by_name[self.evaluate.main_agent], by_name[self.evaluate.no_pessimism_agent]
        if abl.name == main.name or abl.c_u != 0:
            raise ValueError(f"evaluate.no_pessimism_agent = {abl.name!r} must be another agent with c_u = 0 "
                             f"(the main agent without its pessimism), got c_u = {abl.c_u}")
        same = ("setups", "episodes", "c_r", "c_d", "b_d", "kappa", "lam_max")
        differ = [k for k in same if getattr(abl, k) != getattr(main, k)]
        if differ:
            raise ValueError(f"evaluate.no_pessimism_agent = {abl.name!r} differs from the main agent "
                             f"{main.name!r} in {differ}: only c_u may differ (it is the main agent's ablation)")
        return self


PARAMS = LinearCmdpParams
