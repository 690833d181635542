"""What BOBD (:mod:`.bobd`) and its baselines (:mod:`.baselines`) share: IPOPT on a casadi model
(and its evaluation count), the sampling box, integer decoding, pymoo's constraint form, the
result record, the single-level view of a model, the two levels of a bilevel one, and pymoo's GA
driven by ask/tell until an evaluation budget is used.

Evaluations are counted as bobd.py's docstring says (one f+g evaluation, one gradient/Jacobian,
one Hessian = 1 each; an IPOPT solve's counts come from casadi's stats: :func:`ipopt_evals`).
Both :mod:`.bobd` and :mod:`.baselines` import this module; it imports neither.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np

from .pyomo_casadi import CasadiModel, build_casadi, model_vars

IPOPT_OPTS = {"ipopt.print_level": 0, "ipopt.sb": "yes", "print_time": 0}
UNBOUNDED_BOX = 10.0   # sampling box half-width for a variable without a bound


# --------------------------------------------------------------------------- IPOPT helper
def ipopt_evals(stats: dict) -> int:
    return int(max(stats.get("n_call_nlp_f", 0), stats.get("n_call_nlp_g", 0))
               + max(stats.get("n_call_nlp_grad_f", 0), stats.get("n_call_nlp_jac_g", 0))
               + stats.get("n_call_nlp_hess_l", 0))


class Ipopt:
    """IPOPT on a CasadiModel (its free variables), reusable for many parameter values."""

    def __init__(self, cm: CasadiModel, max_iter: int = 200, f=None, g=None, lbg=None, ubg=None):
        self.cm = cm
        nlp = {"x": cm.x, "p": cm.p, "f": cm.f if f is None else f, "g": cm.g if g is None else g}
        opts = dict(IPOPT_OPTS)
        opts["ipopt.max_iter"] = int(max_iter)
        self.solver = ca.nlpsol("s", "ipopt", nlp, opts)
        self.lbg = cm.lbg if lbg is None else lbg
        self.ubg = cm.ubg if ubg is None else ubg
        self.lbx = cm.lb[cm.free]
        self.ubx = cm.ub[cm.free]

    def solve(self, x0: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, int]:
        """(solution of the free variables, evaluations used)."""
        if len(x0) == 0:
            return np.zeros(0), 0
        r = self.solver(x0=np.clip(x0, self.lbx, self.ubx), p=p, lbx=self.lbx, ubx=self.ubx,
                        lbg=self.lbg, ubg=self.ubg)
        x = np.asarray(r["x"], float).ravel()
        if not np.all(np.isfinite(x)):
            x = np.clip(np.nan_to_num(x0), self.lbx, self.ubx)
        return np.clip(x, self.lbx, self.ubx), ipopt_evals(self.solver.stats())


def sample_box(lb: np.ndarray, ub: np.ndarray, rng: np.random.Generator, k: int = 1) -> np.ndarray:
    lo = np.where(np.isfinite(lb), lb, np.minimum(-UNBOUNDED_BOX, np.where(np.isfinite(ub), ub - 2 * UNBOUNDED_BOX, 0)))
    hi = np.where(np.isfinite(ub), ub, np.maximum(UNBOUNDED_BOX, np.where(np.isfinite(lb), lb + 2 * UNBOUNDED_BOX, 0)))
    return rng.uniform(lo, hi, size=(k, len(lb)))


def box_centre(lb: np.ndarray, ub: np.ndarray) -> np.ndarray:
    lo = np.where(np.isfinite(lb), lb, np.where(np.isfinite(ub), ub - UNBOUNDED_BOX, -0.0))
    hi = np.where(np.isfinite(ub), ub, np.where(np.isfinite(lb), lb + UNBOUNDED_BOX, 0.0))
    return (lo + hi) / 2


def decode_integers(U: np.ndarray, integer: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> np.ndarray:
    """Round the integer genes to the nearest integer in the box."""
    U = np.array(U, float)
    if integer.any():
        U[:, integer] = np.clip(np.round(U[:, integer]), np.ceil(lb[integer]), np.floor(ub[integer]))
    return U


def pymoo_G(cm: CasadiModel, g: np.ndarray, feas_tol: float) -> np.ndarray:
    """pymoo inequality constraints (<= 0) from lbg <= g <= ubg; equalities within feas_tol."""
    g = np.atleast_2d(g)
    if g.shape[1] == 0:
        return np.zeros((g.shape[0], 0))
    eq = np.isfinite(cm.lbg) & np.isfinite(cm.ubg) & (cm.lbg == cm.ubg)
    v = np.maximum(cm.lbg - g, g - cm.ubg)
    v = np.where(np.isfinite(v), v, -1.0)
    return np.where(eq, v - feas_tol, v)


# --------------------------------------------------------------------------- result record
@dataclass
class Result:
    objective: float | None          # as the model states it (max problems not negated)
    feasible: bool
    max_violation: float
    evals: int
    seconds: float
    x: dict[str, list[float]]
    upper_vars: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"objective": self.objective, "feasible": self.feasible,
                "max_violation": self.max_violation, "evals": self.evals,
                "seconds": self.seconds, "x": self.x, "upper_vars": self.upper_vars, **self.extra}


def group_values(names: list[str], values: np.ndarray) -> dict[str, list[float]]:
    """{'x': [...], 'y': [...]} from flat VarData names like x[3] (order of declaration)."""
    out: dict[str, list[float]] = {}
    for n, v in zip(names, values):
        out.setdefault(n.split("[")[0], []).append(float(v))
    return out


# --------------------------------------------------------------------------- the problem view
class SingleLevel:
    """A single-objective Pyomo model, with a chosen set of upper-level variables (parameters)."""

    def __init__(self, model, upper: list[str], max_iter: int, feas_tol: float):
        allv = model_vars(model)
        byname = {v.name: v for v in allv}
        self.full = build_casadi(model)                          # every variable free
        self.split = build_casadi(model, param_vars=[byname[n] for n in upper])
        self.names = self.full.names
        self.upper = upper
        self.max_iter, self.feas_tol = max_iter, feas_tol
        self._ipopt_split: Ipopt | None = None
        self._ipopt_full: Ipopt | None = None

    def ipopt_split(self) -> Ipopt:
        if self._ipopt_split is None:
            self._ipopt_split = Ipopt(self.split, self.max_iter)
        return self._ipopt_split

    def ipopt_full(self) -> Ipopt:
        if self._ipopt_full is None:
            self._ipopt_full = Ipopt(self.full, self.max_iter)
        return self._ipopt_full

    def assemble(self, xl: np.ndarray, u: np.ndarray) -> np.ndarray:
        z = np.zeros(self.split.n)
        z[self.split.free] = xl
        z[self.split.params] = u
        return z

    def score(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """f (minimised), violation, pymoo G at full points Z (k, n)."""
        f, g = self.full.evaluate(Z, np.zeros((len(Z), 0)))
        return f, self.full.violation(g), pymoo_G(self.full, g, self.feas_tol)


def bilevel_parts(model, lower_vars: tuple[str, ...]):
    """(lower objective, lower constraints, upper objective, upper constraints, lower VarData)."""
    import pyomo.environ as pe

    blk = model.lower
    lobj = next(iter(blk.component_data_objects(pe.Objective, descend_into=True, active=None)))
    lcons = list(blk.component_data_objects(pe.Constraint, descend_into=True, active=True))
    ids = {id(c) for c in lcons}
    ucons = [c for c in model.component_data_objects(pe.Constraint, descend_into=True, active=True)
             if id(c) not in ids]
    uobj = next(o for o in model.component_data_objects(pe.Objective, descend_into=True, active=True))
    declared = list(blk.component_data_objects(pe.Var, descend_into=True))
    lvars = declared or [v for v in model_vars(model) if v.parent_component().local_name in lower_vars]
    return lobj, lcons, uobj, ucons, lvars


def is_bilevel(model) -> bool:
    import pyomo.environ as pe

    blk = getattr(model, "lower", None)
    return blk is not None and any(True for _ in blk.component_data_objects(pe.Objective, active=None))


# --------------------------------------------------------------------------- the GA driver
def _ga(pop_size: int, seed: int):
    from pymoo.algorithms.soo.nonconvex.ga import GA

    return GA(pop_size=pop_size, eliminate_duplicates=True)


def run_ga(xl, xu, n_constr, evaluate, *, budget, pop_size, seed, count):
    """pymoo GA via ask/tell; ``evaluate(U) -> (F, G)``; stops when count() >= budget."""
    from pymoo.core.evaluator import Evaluator
    from pymoo.core.problem import Problem

    class _P(Problem):
        def _evaluate(self, X, out, *args, **kwargs):
            F, G = evaluate(X)
            out["F"] = np.asarray(F, float).reshape(-1, 1)
            if n_constr:
                out["G"] = G

    problem = _P(n_var=len(xl), n_obj=1, n_ieq_constr=n_constr, xl=np.asarray(xl, float), xu=np.asarray(xu, float))
    algo = _ga(pop_size, seed)
    algo.setup(problem, termination=("n_gen", 10 ** 9), seed=seed, verbose=False)  # the budget stops it
    evaluator = Evaluator()
    while count() < budget and algo.has_next():
        pop = algo.ask()
        evaluator.eval(problem, pop)
        algo.tell(infills=pop)
    return algo
