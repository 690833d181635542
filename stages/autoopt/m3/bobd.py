"""BOBD: bilevel-optimisation-based decomposition (AutoOpt's M3), on Pyomo models.

Following Sinha, Pujara, Singh, "Decomposition of Difficulties in Complex Optimization Problems
Using a Bilevel Approach" (arXiv 2407.03454) and AutoOpt (arXiv 2510.21436, M3) as far as we could
read them here (their abstracts and introductions; neither the BOBD paper's algorithm listing,
operators and settings nor its 10-problem suite were readable, so those are our choices): the variables that carry the difficulties an evolutionary algorithm handles go
to an upper level searched by a population method; for every upper-level candidate the rest of
the problem (upper values fixed) is a lower-level problem solved by a classical method; the
candidate's fitness is the lower level's optimum.

What we followed and what we chose:

* Complicating variables (the study's definition) are found from the Pyomo expression tree by
  :func:`classify`: those inside ``abs``/``min``/``max`` (non-differentiable), ``floor``/``ceil``/
  ``Expr_if`` (discontinuous), and integer-domain variables. Smooth non-convex variables (inside
  sin/cos/tan, products of variables, odd or variable powers, divisions by variables) are
  recorded too but stay at the lower level unless ``nonconvex_upper=True`` (our default: False,
  the study's definition; the BOBD paper also lists non-convexity among what EAs handle).
* Upper level: pymoo's real-coded GA (SBX + polynomial mutation, tournament selection; pymoo's
  defaults), driven by ask/tell until the evaluation budget is used. Integer genes are rounded to
  the nearest integer in the box (the same decoding as the GA baseline).
* Lower level: IPOPT (casadi's bundled build) from a warm start: the lower-level solution of the
  best candidate found so far (the first from the box's centre). IPOPT runs with ``max_iter``.
* Constraints: the candidate's objective and constraint residuals are taken at the lower-level
  solution IPOPT returns; pymoo's feasibility-first rule ranks them (an infeasible lower level is
  thus penalised by its remaining violation, no penalty weight). Equalities count as satisfied
  within ``feas_tol``.
* No upper-level variables: BOBD is IPOPT multi-start (nothing to decompose). No lower-level
  variables: the GA evaluates the model directly. A linear model (LP/MILP) given to
  :func:`solve_model` goes to HiGHS instead (the study's "MILP/LP pieces by HiGHS").
* Bilevel models (a ``lower`` block with an objective): the lower-level variables (declared in
  the block, else the Var components named in ``lower_vars``) are the lower level, solved by
  IPOPT for the lower objective and constraints; all other variables are the upper level.
* Evaluation count (all methods, :mod:`.baselines` too): one evaluation = objective and
  constraints at one point, or one gradient/Jacobian evaluation, or one Hessian evaluation;
  an IPOPT solve costs max(n_f, n_g) + max(n_grad_f, n_jac_g) + n_hess from casadi's stats
  (:func:`.core.ipopt_evals`).
* What BOBD shares with the baselines (IPOPT, the box, integer decoding, the result record, the
  single-level and bilevel views, the GA driver) is in :mod:`.core`, which imports neither.
"""
from __future__ import annotations

import math
import time

import numpy as np

from .baselines import ipopt_multistart
from .core import (UNBOUNDED_BOX, Ipopt, Result, SingleLevel, bilevel_parts, box_centre, decode_integers,
                   group_values, is_bilevel, pymoo_G, run_ga)
from .pyomo_casadi import build_casadi, model_vars

REASONS = ("integer", "nondifferentiable", "discontinuous", "nonconvex")


# --------------------------------------------------------------------------- classification
def classify(model, *, objectives=None, constraints=None) -> dict[str, set[str]]:
    """Variable name -> the difficulties it takes part in (subset of REASONS), from the tree."""
    import pyomo.environ as pe
    from pyomo.core.base.var import VarData
    from pyomo.core.expr import numeric_expr as ne

    out: dict[str, set[str]] = {v.name: set() for v in model_vars(model)}
    for v in model_vars(model):
        if v.is_integer() or v.is_binary():
            out[v.name].add("integer")

    def has_var(e) -> bool:
        return any(True for _ in _vars_of(e))

    def walk(e, ctx: frozenset):
        if isinstance(e, VarData):
            out[e.name].update(ctx)
            return
        if not hasattr(e, "is_expression_type") or not e.is_expression_type():
            return
        if e.is_named_expression_type():
            walk(e.expr, ctx)
            return
        add: set[str] = set()
        if isinstance(e, (ne.AbsExpression, ne.MaxExpression, ne.MinExpression)):
            add.add("nondifferentiable")
        elif isinstance(e, ne.UnaryFunctionExpression):
            name = e.getname()
            if name in ("floor", "ceil"):
                add.add("discontinuous")
            elif name in ("sin", "cos", "tan"):
                add.add("nonconvex")
        elif isinstance(e, ne.Expr_ifExpression):
            add.add("discontinuous")
        elif isinstance(e, ne.ProductExpression) and not isinstance(e, ne.MonomialTermExpression):
            if has_var(e.args[0]) and has_var(e.args[1]):
                add.add("nonconvex")
        elif isinstance(e, ne.DivisionExpression):
            if has_var(e.args[1]):
                add.add("nonconvex")
        elif isinstance(e, ne.PowExpression):
            ex = e.args[1]
            if has_var(ex) or not (isinstance(ex, (int, float)) and ex >= 1 and ex % 2 == 0):
                add.add("nonconvex")
        inner = ctx | add if add else ctx
        for a in e.args:
            walk(a, inner)

    objs = objectives if objectives is not None else list(
        model.component_data_objects(pe.Objective, descend_into=True, active=None))
    cons = constraints if constraints is not None else list(
        model.component_data_objects(pe.Constraint, descend_into=True, active=True))
    for o in objs:
        walk(o.expr, frozenset())
    for c in cons:
        walk(c.body, frozenset())
    return out


def _vars_of(e):
    from pyomo.core.expr.visitor import identify_variables

    if isinstance(e, (int, float)):
        return iter(())
    return identify_variables(e, include_fixed=False)


def upper_variables(reasons: dict[str, set[str]], *, nonconvex_upper: bool = False) -> list[str]:
    keep = {"integer", "nondifferentiable", "discontinuous"} | ({"nonconvex"} if nonconvex_upper else set())
    return [name for name, r in reasons.items() if r & keep]


# --------------------------------------------------------------------------- BOBD
def bobd(model, *, budget: int, seed: int, pop_size: int = 20, max_iter: int = 200,
         feas_tol: float = 1e-6, nonconvex_upper: bool = False,
         lower_vars: tuple[str, ...] = ("y",), upper_ea: str = "ga") -> Result:
    """BOBD on a single-objective (or bilevel) Pyomo model with at most ``budget`` evaluations
    (the last generation may overshoot; ``evals`` is what was used). ``upper_ea``: ``"ga"``
    (pymoo's GA, the default) or ``"g3pcx"`` (BLEAQ2's upper-level operators, :func:`_bobd_g3pcx`;
    single-level models only)."""
    if upper_ea not in ("ga", "g3pcx"):
        raise ValueError(f"upper_ea must be 'ga' or 'g3pcx', got {upper_ea!r}")
    t0 = time.perf_counter()
    if is_bilevel(model):
        res = _bobd_bilevel(model, budget=budget, seed=seed, pop_size=pop_size, max_iter=max_iter,
                            feas_tol=feas_tol, lower_vars=lower_vars)
        res.seconds = time.perf_counter() - t0
        return res
    reasons = classify(model)
    upper = upper_variables(reasons, nonconvex_upper=nonconvex_upper)
    sl = SingleLevel(model, upper, max_iter, feas_tol)
    if not upper:
        res = ipopt_multistart(model, budget=budget, seed=seed, max_iter=max_iter, feas_tol=feas_tol, sl=sl)
        res.upper_vars = []
        res.seconds = time.perf_counter() - t0
        return res
    if upper_ea == "g3pcx":
        res = _bobd_g3pcx(sl, budget=budget, seed=seed, pop_size=pop_size, feas_tol=feas_tol)
        res.seconds = time.perf_counter() - t0
        return res
    cm = sl.split
    ulb, uub, uint = cm.lb[cm.params], cm.ub[cm.params], cm.integer[cm.params]
    xl_ = np.where(np.isfinite(ulb), ulb, -UNBOUNDED_BOX)   # the GA's box (unbounded: +-10)
    xu_ = np.where(np.isfinite(uub), uub, UNBOUNDED_BOX)
    n_lower = len(cm.free)
    state = {"evals": 0, "warm": box_centre(cm.lb[cm.free], cm.ub[cm.free]), "bestz": None}
    ip = sl.ipopt_split() if n_lower else None

    def evaluate(U):
        U = decode_integers(U, uint, ulb, uub)
        Z = np.zeros((len(U), cm.n))
        for k, u in enumerate(U):
            if n_lower:
                xl, ev = ip.solve(state["warm"], u)
                state["evals"] += ev
            else:
                xl = np.zeros(0)
            Z[k] = sl.assemble(xl, u)
        f, viol, G = sl.score(Z)
        state["evals"] += len(U)
        for k in range(len(U)):
            # the best so far: feasible first, then objective; its lower solution warm-starts
            key = (viol[k] > feas_tol, f[k] if viol[k] <= feas_tol else viol[k])
            if state["bestz"] is None or key < state["bestkey"]:
                state.update(bestkey=key, bestz=Z[k].copy())
                if n_lower:
                    state["warm"] = Z[k][cm.free]
        return f, G

    run_ga(xl_, xu_, len(cm.lbg), evaluate, budget=budget, pop_size=pop_size, seed=seed,
           count=lambda: state["evals"])
    z = state["bestz"]
    f, viol, _ = sl.score(z[None])
    return Result(sl.full.user_value(f[0]), bool(viol[0] <= feas_tol), float(viol[0]), state["evals"],
                  time.perf_counter() - t0, group_values(sl.names, z), upper)


def _bobd_g3pcx(sl: SingleLevel, *, budget: int, seed: int, pop_size: int, feas_tol: float) -> Result:
    """BOBD's upper level with the operators of the same first author's released bilevel code
    (BLEAQ2, github.com/ankurzing/bleaq2, ulSearch.m), the closest code we could read (the BOBD
    paper's own listing was not readable): a steady-state EA; each step takes the best member and
    two binary-tournament winners (among four random feasible members, or the four best when
    fewer are feasible) as parents, makes two offspring by adaptive planar PCX (probability 0.9,
    sigma1 = 0.1, sigma2 = 1 / mean |index parent - centroid|), polynomial mutation (eta 20,
    probability 1/n, unscaled step as in ulSearch.m), clipped to the box; each offspring's lower
    level is warm-started from the lower-level solution of its closest parent; two random members
    and the two offspring compete and the best two stay. Not taken from BLEAQ2: its quadratic
    approximations of the lower-level optimum (psi / phi mappings), its population floor
    (n+1)(n+2)/2 + 5n (sized for those fits), its local search and its termination tests."""
    cm = sl.split
    rng = np.random.default_rng(seed)
    ulb, uub, uint = cm.lb[cm.params], cm.ub[cm.params], cm.integer[cm.params]
    lo = np.where(np.isfinite(ulb), ulb, -UNBOUNDED_BOX)
    hi = np.where(np.isfinite(uub), uub, UNBOUNDED_BOX)
    nu, n_lower = len(lo), len(cm.free)
    ip = sl.ipopt_split() if n_lower else None
    state = {"evals": 0}

    def solve(u, warm):
        u = decode_integers(u[None], uint, ulb, uub)[0]
        xl = np.zeros(0)
        if n_lower:
            xl, ev = ip.solve(warm, u)
            state["evals"] += ev
        z = sl.assemble(xl, u)
        f, viol, _ = sl.score(z[None])
        state["evals"] += 1
        return u, xl, z, float(f[0]), float(viol[0])

    def key(f, viol):
        return (viol > feas_tol, f if viol <= feas_tol else viol)

    centre = box_centre(cm.lb[cm.free], cm.ub[cm.free])
    pop = []      # (key, u, xl, z)
    for u0 in rng.uniform(lo, hi, size=(pop_size, nu)):
        u, xl, z, f, viol = solve(u0, centre)
        pop.append((key(f, viol), u, xl, z))
        if state["evals"] >= budget:
            break
    while state["evals"] < budget:
        order = sorted(range(len(pop)), key=lambda i: pop[i][0])
        best = order[0]
        feas = [i for i in range(len(pop)) if not pop[i][0][0]]
        cand = list(rng.choice(feas, 4, replace=False)) if len(feas) > 4 else order[:4]
        while len(cand) < 4:
            cand.append(order[rng.integers(len(order))])
        others = [a if pop[a][0] < pop[b][0] else b for a, b in (cand[:2], cand[2:])]
        P = np.array([pop[i][1] for i in [best] + others])
        g = P.mean(axis=0)
        spread = float(np.mean(np.abs(P[0] - g)))
        sigma2 = 0.0 if spread <= 1e-10 else 1.0 / spread
        children = []
        for _ in range(2):
            a, b = (P[1], P[2]) if rng.random() < 0.5 else (P[2], P[1])
            if rng.random() < 0.9:
                c = P[0] + rng.standard_normal() * 0.1 * (P[0] - g) + rng.standard_normal() * sigma2 * (b - a) / 2
            else:
                c = P[0].copy()
            r = rng.random(nu)
            delta = np.where(r < 0.5, (2 * r) ** (1 / 21) - 1, 1 - (2 * (1 - r)) ** (1 / 21))
            mut = rng.random(nu) < 1.0 / nu
            c = np.clip(np.where(mut, c + delta, c), lo, hi)
            near = [best] + others
            j = near[int(np.argmin([np.linalg.norm(c - pop[i][1]) for i in near]))]
            u, xl, z, f, viol = solve(c, pop[j][2] if n_lower else centre)
            children.append((key(f, viol), u, xl, z))
        r = list(rng.choice(len(pop), 2, replace=False))
        pool = sorted([pop[i] for i in r] + children, key=lambda t: t[0])
        for i, member in zip(r, pool[:2]):
            pop[i] = member
    bk, _, _, z = min(pop, key=lambda t: t[0])
    f, viol, _ = sl.score(z[None])
    return Result(sl.full.user_value(f[0]), bool(viol[0] <= feas_tol), float(viol[0]), state["evals"], 0.0,
                  group_values(sl.names, z), sl.upper, {"upper_ea": "g3pcx"})


def _bobd_bilevel(model, *, budget, seed, pop_size, max_iter, feas_tol, lower_vars) -> Result:
    lobj, lcons, uobj, ucons, lvars = bilevel_parts(model, lower_vars)
    allv = model_vars(model)
    lid = {id(v) for v in lvars}
    uvars = [v for v in allv if id(v) not in lid]
    low = build_casadi(model, objective=lobj, constraints=lcons, param_vars=uvars)
    up = build_casadi(model, objective=uobj, constraints=ucons + lcons)
    ip = Ipopt(low, max_iter)
    ulb, uub = low.lb[low.params], low.ub[low.params]
    uint = low.integer[low.params]
    state = {"evals": 0, "warm": box_centre(low.lb[low.free], low.ub[low.free]), "bestkey": None, "bestz": None}

    def assemble(xl, u):
        z = np.zeros(low.n)
        z[low.free] = xl
        z[low.params] = u
        return z

    def evaluate(U):
        U = decode_integers(U, uint, ulb, uub)
        Z = np.zeros((len(U), low.n))
        for k, u in enumerate(U):
            xl, ev = ip.solve(state["warm"], u)
            state["evals"] += ev
            Z[k] = assemble(xl, u)
        # Z is in declaration order (low.free / low.params index it), as up expects
        f, g = up.evaluate(Z, np.zeros((len(U), 0)))
        state["evals"] += len(U)
        viol = up.violation(g)
        for k in range(len(U)):
            key = (viol[k] > feas_tol, f[k] if viol[k] <= feas_tol else viol[k])
            if state["bestz"] is None or key < state["bestkey"]:
                state.update(bestkey=key, bestz=Z[k].copy())
                state["warm"] = Z[k][low.free]
        return f, pymoo_G(up, g, feas_tol)

    run_ga(np.where(np.isfinite(ulb), ulb, -UNBOUNDED_BOX), np.where(np.isfinite(uub), uub, UNBOUNDED_BOX),
           len(up.lbg), evaluate, budget=budget, pop_size=pop_size, seed=seed,
           count=lambda: state["evals"])
    z = state["bestz"]
    f, g = up.evaluate(z[None], np.zeros((1, 0)))
    viol = float(up.violation(g)[0])
    return Result(up.user_value(f[0]), viol <= feas_tol, viol, state["evals"], 0.0,
                  group_values(up.names, z), [v.name for v in uvars])


# --------------------------------------------------------------------------- generic entry point
def solve_model(model, *, budget: int, seed: int, **options) -> dict:
    """BOBD on a Pyomo model built from a generated script (single-objective min/max with
    constraints, integer variables, indexed sums; bilevel with a ``lower`` block). Options:
    pop_size, max_iter, feas_tol, nonconvex_upper, lower_vars. A multi-objective model is
    solved for its first objective (the others deactivated). Returns a JSON-able dict."""
    import pyomo.environ as pe

    if budget < 1:
        raise ValueError(f"budget must be >= 1, got {budget}")
    objs = list(model.component_data_objects(pe.Objective, active=True, descend_into=True))
    if is_bilevel(model):
        objs = [o for o in objs if o.parent_block() is model]
    if not objs:
        raise ValueError("the model has no active objective")
    for o in objs[1:]:
        o.deactivate()
    if not is_bilevel(model) and is_linear(model):
        return highs_solve(model).as_dict()
    res = bobd(model, budget=budget, seed=seed, **options)
    return res.as_dict()


def is_linear(model) -> bool:
    """Objective and constraints all of polynomial degree <= 1 (an LP, or a MILP with integers)."""
    import pyomo.environ as pe

    parts = [o.expr for o in model.component_data_objects(pe.Objective, active=True, descend_into=True)]
    parts += [c.body for c in model.component_data_objects(pe.Constraint, active=True, descend_into=True)]
    return all((d := _degree(e)) is not None and d <= 1 for e in parts)


def _degree(e):
    from pyomo.core.expr.numvalue import polynomial_degree

    return polynomial_degree(e)


def highs_solve(model, time_limit: float = 30.0) -> Result:
    """An LP/MILP piece solved by HiGHS (through Pyomo's appsi interface); evals are not counted
    (0): HiGHS does not work by function evaluations."""
    import pyomo.environ as pe
    from pyomo.contrib.appsi.base import TerminationCondition
    from pyomo.contrib.appsi.solvers import Highs

    t0 = time.perf_counter()
    opt = Highs()
    opt.config.time_limit = time_limit
    opt.config.load_solution = False
    res = opt.solve(model)
    allv = model_vars(model)
    if res.termination_condition != TerminationCondition.optimal:
        return Result(None, False, math.inf, 0, time.perf_counter() - t0, {}, [], {"solver": "highs"})
    res.solution_loader.load_vars()
    obj = next(model.component_data_objects(pe.Objective, active=True, descend_into=True))
    viol = 0.0
    for c in model.component_data_objects(pe.Constraint, active=True, descend_into=True):
        b = pe.value(c.body)
        viol = max(viol, (b - pe.value(c.upper)) if c.upper is not None else 0.0,
                   (pe.value(c.lower) - b) if c.lower is not None else 0.0)
    return Result(float(pe.value(obj.expr)), viol <= 1e-6, float(viol), 0, time.perf_counter() - t0,
                  group_values([v.name for v in allv], np.array([v.value for v in allv], float)), [],
                  {"solver": "highs"})


# --------------------------------------------------------------------------- multi-objective
def bobd_multi(model, *, budget: int, seed: int, pop_size: int = 20, max_iter: int = 200,
               nonconvex_upper: bool = False) -> tuple[np.ndarray, int]:
    """BOBD for a multi-objective model (our choice, the BOBD paper being single-objective):
    NSGA-II (pymoo) at the upper level over the complicating variables, or, when there are none,
    over the variables of the first objective (which place a point along the trade-off); the
    lower level minimises the last objective with the upper values fixed (IPOPT). Returns the
    final non-dominated objective vectors (as the model states them) and the evaluations used."""
    import pyomo.environ as pe
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.evaluator import Evaluator
    from pymoo.core.problem import Problem
    from pyomo.core.expr.visitor import identify_variables

    objs = list(model.component_data_objects(pe.Objective, active=True, descend_into=True))
    reasons = classify(model, objectives=objs)
    upper = upper_variables(reasons, nonconvex_upper=nonconvex_upper)
    if not upper:
        upper = sorted({v.name for v in identify_variables(objs[0].expr)})
    byname = {v.name: v for v in model_vars(model)}
    parts = [build_casadi(model, objective=o, param_vars=[byname[n] for n in upper]) for o in objs]
    last = parts[-1]
    ip = Ipopt(last, max_iter)
    ulb, uub, uint = last.lb[last.params], last.ub[last.params], last.integer[last.params]
    state = {"evals": 0, "warm": box_centre(last.lb[last.free], last.ub[last.free])}

    class _P(Problem):
        def _evaluate(self, X, out, *args, **kwargs):
            U = decode_integers(X, uint, ulb, uub)
            XL = np.zeros((len(U), len(last.free)))
            for k, u in enumerate(U):
                XL[k], ev = ip.solve(state["warm"], u)
                state["evals"] += ev
            F = np.column_stack([c.evaluate(XL, U)[0] for c in parts])
            state["evals"] += len(U)
            out["F"] = F
            out["G"] = pymoo_G(last, last.evaluate(XL, U)[1], 1e-6) if len(last.lbg) else None

    n_con = len(last.lbg)
    problem = _P(n_var=len(upper), n_obj=len(objs), n_ieq_constr=n_con,
                 xl=np.where(np.isfinite(ulb), ulb, -UNBOUNDED_BOX), xu=np.where(np.isfinite(uub), uub, UNBOUNDED_BOX))
    algo = NSGA2(pop_size=pop_size)
    algo.setup(problem, termination=("n_gen", 10 ** 9), seed=seed, verbose=False)
    evaluator = Evaluator()
    while state["evals"] < budget:
        pop = algo.ask()
        evaluator.eval(problem, pop)
        algo.tell(infills=pop)
    F = algo.opt.get("F") * np.array([c.sign for c in parts])
    return np.atleast_2d(F), state["evals"]
