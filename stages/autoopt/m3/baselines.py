"""M3's baselines, run for real on the same problems and evaluation budgets as BOBD.

* :func:`ipopt_multistart`: IPOPT alone (casadi's bundled build) from uniform random points of
  the box (an unbounded side: +-10), restarted until it has used the evaluation budget (BOBD's
  count on that problem and run; the last start may overshoot by one solve; the best of the
  starts that ended within the budget is also returned, ``extra["within_budget"]``, for the
  strictly-equal-evaluations reading). Integer variables:
  relaxed to the box, rounded to the nearest integer after the solve, then fixed while IPOPT
  solves the continuous rest again (both solves are counted). The best point (feasible first,
  then objective) is kept.
* :func:`ga_alone`: pymoo's GA (its defaults: SBX, polynomial mutation, tournament selection,
  feasibility-first constraint handling) on all variables, integer genes rounded as in BOBD,
  until the budget is used; one individual = one evaluation (batched through casadi).
* Bilevel models: neither baseline can nest a lower level, so both get the single-level KKT
  reformulation usual in the literature: the lower level's stationarity condition
  (grad_y f(x, y) = 0; the literature problems we use have unconstrained lower levels with
  interior optima) as equality constraints, within ``feas_tol`` for the GA.
* :func:`nsga2`: pymoo's NSGA-II on a multi-objective model (the reference front maker).
* HiGHS: the benchmark has no LP/MILP piece; linear models given to ``bobd.solve_model`` (the
  end-to-end path) go to HiGHS there.

Evaluations are counted as in bobd.py (one f+g evaluation, one gradient/Jacobian, one Hessian = 1
each; an IPOPT solve's counts come from casadi's stats).
"""
from __future__ import annotations

import math
import time

import casadi as ca
import numpy as np

from .core import (UNBOUNDED_BOX, Ipopt, Result, SingleLevel, bilevel_parts, decode_integers, group_values,
                   is_bilevel, pymoo_G, run_ga, sample_box)
from .pyomo_casadi import CasadiModel, build_casadi, model_vars


def _better(key_a, key_b) -> bool:
    return key_b is None or key_a < key_b


def _key(f: float, viol: float, feas_tol: float):
    return (viol > feas_tol, f if viol <= feas_tol else viol)


def ipopt_multistart(model, *, budget: int, seed: int, max_iter: int = 200, feas_tol: float = 1e-6,
                     sl: SingleLevel | None = None) -> Result:
    """IPOPT from random starts until ``budget`` evaluations are used (at least one start)."""
    t0 = time.perf_counter()
    if is_bilevel(model):
        cm, names = kkt_model(model)
        ints = np.zeros(cm.n, bool)
        full_ip = Ipopt(cm, max_iter)
        fix_ip = None
    else:
        allv = model_vars(model)
        ints_names = [v.name for v in allv if v.is_integer() or v.is_binary()]
        sl = sl or SingleLevel(model, ints_names, max_iter, feas_tol)
        if sorted(sl.upper) != sorted(ints_names):
            sl = SingleLevel(model, ints_names, max_iter, feas_tol)
        cm, names = sl.full, sl.names
        ints = cm.integer
        full_ip = sl.ipopt_full()
        fix_ip = sl.ipopt_split() if ints.any() and len(sl.split.free) else None
    rng = np.random.default_rng(seed)
    evals, best_key, best_z, starts = 0, None, None, 0
    strict = {"key": None, "z": None, "evals": 0}     # the best of the starts that ended within the budget
    while evals < budget or starts == 0:
        z0 = sample_box(cm.lb, cm.ub, rng)[0]
        z, ev = full_ip.solve(z0, np.zeros(0))
        evals += ev
        if ints.any():
            z = decode_integers(z[None], ints, cm.lb, cm.ub)[0]
            if fix_ip is not None:
                xl, ev = fix_ip.solve(z[sl.split.free], z[sl.split.params])
                evals += ev
                z = sl.assemble(xl, z[sl.split.params])
        f, g = cm.evaluate(z[None], np.zeros((1, 0)))
        evals += 1
        viol = float(cm.violation(g)[0])
        key = _key(f[0], viol, feas_tol)
        if _better(key, best_key):
            best_key, best_z = key, z
        if starts == 0 or evals <= budget:
            strict["evals"] = evals
            if _better(key, strict["key"]):
                strict.update(key=key, z=z)
        starts += 1
    f, g = cm.evaluate(best_z[None], np.zeros((1, 0)))
    viol = float(cm.violation(g)[0])
    fs, gs = cm.evaluate(strict["z"][None], np.zeros((1, 0)))
    vs = float(cm.violation(gs)[0])
    within = {"objective": cm.user_value(fs[0]), "feasible": vs <= feas_tol, "max_violation": vs,
              "evals": int(strict["evals"])}
    return Result(cm.user_value(f[0]), viol <= feas_tol, viol, evals, time.perf_counter() - t0,
                  group_values(names, best_z), extra={"starts": starts, "within_budget": within})


def ga_alone(model, *, budget: int, seed: int, pop_size: int = 50, feas_tol: float = 1e-6) -> Result:
    """pymoo's GA on every variable until ``budget`` evaluations are used."""
    t0 = time.perf_counter()
    if is_bilevel(model):
        cm, names = kkt_model(model)
    else:
        cm = build_casadi(model)
        names = cm.names
    lb = np.where(np.isfinite(cm.lb), cm.lb, -UNBOUNDED_BOX)
    ub = np.where(np.isfinite(cm.ub), cm.ub, UNBOUNDED_BOX)
    state = {"evals": 0, "key": None, "z": None}

    def evaluate(U):
        Z = decode_integers(U, cm.integer, cm.lb, cm.ub)
        f, g = cm.evaluate(Z, np.zeros((len(Z), 0)))
        state["evals"] += len(Z)
        viol = cm.violation(g)
        for k in range(len(Z)):
            key = _key(f[k], viol[k], feas_tol)
            if _better(key, state["key"]):
                state.update(key=key, z=Z[k].copy())
        return f, pymoo_G(cm, g, feas_tol)

    run_ga(lb, ub, len(cm.lbg), evaluate, budget=budget, pop_size=pop_size, seed=seed,
           count=lambda: state["evals"])
    z = state["z"]
    f, g = cm.evaluate(z[None], np.zeros((1, 0)))
    viol = float(cm.violation(g)[0])
    return Result(cm.user_value(f[0]), viol <= feas_tol, viol, state["evals"], time.perf_counter() - t0,
                  group_values(names, z))


def kkt_model(model, lower_vars: tuple[str, ...] = ("y",)) -> tuple[CasadiModel, list[str]]:
    """The single-level KKT reformulation of a bilevel model with an unconstrained lower level:
    min F(x, y) s.t. G(x, y) <= 0, grad_y f(x, y) = 0 (lower-level constraints kept too)."""
    lobj, lcons, uobj, ucons, lvars = bilevel_parts(model, lower_vars)
    up = build_casadi(model, objective=uobj, constraints=ucons + lcons)
    low = build_casadi(model, objective=lobj, constraints=[])
    lid = {id(v) for v in lvars}
    idx = [k for k, v in enumerate(model_vars(model)) if id(v) in lid]
    # low has every variable free, in the same order as up: substitute up's symbols
    fl = ca.substitute(low.f, low.x, up.x)
    stat = ca.gradient(fl, up.x)[idx]
    g = ca.vertcat(up.g, stat)
    n = len(idx)
    cm = CasadiModel(up.names, up.free, up.params, up.lb, up.ub, up.integer, up.sign, up.x, up.p, up.f, g,
                     np.r_[up.lbg, np.zeros(n)], np.r_[up.ubg, np.zeros(n)])
    return cm, up.names


def nsga2(F_of, lb: np.ndarray, ub: np.ndarray, n_obj: int, *, budget: int, seed: int, pop_size: int = 40):
    """pymoo NSGA-II on a vectorised objective ``F_of(X) -> (k, n_obj)``; returns the final
    non-dominated objective vectors and the evaluations used."""
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.problem import Problem

    class P(Problem):
        def __init__(self):
            super().__init__(n_var=len(lb), n_obj=n_obj, xl=lb, xu=ub)

        def _evaluate(self, X, out, *args, **kwargs):
            out["F"] = F_of(X)

    from pymoo.optimize import minimize
    gens = max(1, math.ceil(budget / pop_size))      # pop_size evaluations a generation
    res = minimize(P(), NSGA2(pop_size=pop_size), ("n_gen", gens), seed=seed, verbose=False)
    return np.atleast_2d(res.F), int(res.algorithm.evaluator.n_eval)
