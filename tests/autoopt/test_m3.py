"""M3: the Pyomo -> casadi converter against Pyomo's own values, IPOPT against closed forms, BOBD
against brute-force enumeration, every benchmark problem's stated optimum, the variable
classification on hand-made models, bad params, and determinism (in process and at smoke size).
The grown set: shifts move the optimum and keep its value, each new family's closed-form
optimum against a library global solver on a tiny instance, the fixed-point problems against the
literature's values and a local solve, integer optima by enumeration; the paired bootstrap on
cases worked by hand."""
from __future__ import annotations

import copy
import itertools
import json
import math
import random
import warnings

import numpy as np
import pytest

from tests.helpers import REPO, params_error

from .conftest import GEN

warnings.filterwarnings("ignore", category=RuntimeWarning)


def _set(m, point: dict[str, list[float]]):
    for comp, vals in point.items():
        c = getattr(m, comp)
        for i, v in zip(c, vals):
            c[i].set_value(v, skip_validation=True)


def _value_and_violation(m) -> tuple[float, float]:
    import pyomo.environ as pe

    obj = next(m.component_data_objects(pe.Objective, active=True, descend_into=True))
    viol = 0.0
    for c in m.component_data_objects(pe.Constraint, active=True, descend_into=True):
        b = pe.value(c.body)
        if c.upper is not None:
            viol = max(viol, b - pe.value(c.upper))
        if c.lower is not None:
            viol = max(viol, pe.value(c.lower) - b)
    return float(pe.value(obj.expr)), viol


# --------------------------------------------------------------------------- converter
def test_converter_matches_pyomo_on_generated_models():
    import casadi as ca
    import pyomo.environ as pe

    from stages.autoopt.data import grammar as G
    from stages.autoopt.m3.pyomo_casadi import model_vars, to_casadi

    worst, count = 0.0, 0
    for seed in range(250):
        prob = G.generate(seed, **GEN)
        m = G.build_model(prob.pyomo())
        allv = model_vars(m)
        X = ca.SX.sym("x", len(allv))
        sym = {id(v): X[k] for k, v in enumerate(allv)}
        objs = list(m.component_data_objects(pe.Objective, descend_into=True, active=None))
        cons = list(m.component_data_objects(pe.Constraint, descend_into=True))
        F = ca.Function("F", [X], [ca.vertcat(*[to_casadi(o.expr, sym) for o in objs],
                                              *[to_casadi(c.body, sym) for c in cons])])
        rng = random.Random(seed)
        for _ in range(2):
            env = G.random_point(prob, rng)
            ov, _ = G.pyomo_values(m, env)
            xv = [env[v.parent_component().local_name][v.index()] for v in allv]
            got = np.array(F(xv)).ravel()
            want = np.array(ov + [pe.value(c.body) for c in cons])
            worst = max(worst, float(np.max(np.abs(got - want) / np.maximum(1, np.abs(want)))))
            count += 1
    assert count == 500 and worst < 1e-12


def test_converter_covers_other_nodes():
    import casadi as ca
    import pyomo.environ as pe
    from pyomo.core.expr.numeric_expr import MaxExpression, MinExpression

    from stages.autoopt.m3.pyomo_casadi import ConversionError, to_casadi

    m = pe.ConcreteModel()
    m.x = pe.Var([1, 2], initialize=0.7)
    m.p = pe.Param(initialize=2.5, mutable=True)
    m.e = pe.Expression(expr=m.x[1] * m.p)
    x1, x2 = m.x[1], m.x[2]
    exprs = [x1 / (1 + x2 ** 2), x1 ** x2, pe.sqrt(x1 + 3), pe.log(x2 + 3), pe.ceil(3 * x1), -x2,
             MaxExpression((x1, x2, 0.1)), MinExpression((x1, x2)), m.e + 1, pe.tanh(x1), pe.atan(x2),
             pe.Expr_if(IF=x1 == x2, THEN=1.0, ELSE=2.0),
             pe.Expr_if(IF=pe.inequality(0, x1, 1), THEN=x2, ELSE=-x2)]
    X = ca.SX.sym("x", 2)
    sym = {id(x1): X[0], id(x2): X[1]}
    rng = np.random.default_rng(0)
    for e in exprs:
        f = ca.Function("f", [X], [to_casadi(e, sym)])
        for _ in range(5):
            v = rng.uniform(0.1, 2, 2)
            if rng.random() < 0.3:
                v[1] = v[0]
            x1.set_value(v[0])
            x2.set_value(v[1])
            assert float(f(v)) == pytest.approx(pe.value(e), rel=1e-12, abs=1e-12), str(e)
    with pytest.raises(ConversionError, match="has no casadi symbol"):
        to_casadi(x1 + 1, {})


# --------------------------------------------------------------------------- IPOPT, BOBD vs known answers
def test_ipopt_on_a_convex_qp_matches_the_closed_form():
    import pyomo.environ as pe

    from stages.autoopt.m3.baselines import ipopt_multistart

    a = np.array([0.3, -1.2, 2.0, 0.7])
    m = pe.ConcreteModel()
    m.x = pe.Var(range(4), bounds=(-10, 10))
    m.obj = pe.Objective(expr=sum((m.x[i] - a[i]) ** 2 for i in range(4)))
    m.c = pe.Constraint(expr=sum(m.x[i] for i in range(4)) == 1)
    res = ipopt_multistart(m, budget=1, seed=0)
    x_star = a - (a.sum() - 1) / 4            # projection onto the hyperplane
    assert np.allclose(res.x["x"], x_star, atol=1e-7)
    assert res.objective == pytest.approx(float(((x_star - a) ** 2).sum()), rel=1e-8)
    assert res.feasible and res.extra["starts"] == 1


def _tiny_minlp():
    import pyomo.environ as pe

    m = pe.ConcreteModel()
    m.x = pe.Var([1, 2], bounds=(-5, 5))
    m.y = pe.Var([1, 2], domain=pe.Integers, bounds=(0, 4))
    m.obj = pe.Objective(expr=(m.x[1] - 0.5 * m.y[1]) ** 2 + (m.x[2] - 0.5 * m.y[2]) ** 2 + (m.y[1] - 3) ** 2
                         + 2 * (m.y[2] - 1) ** 2 + m.x[1] + 0.3 * m.x[2] + abs(m.y[1] - m.y[2]))
    m.c = pe.Constraint(expr=m.x[1] + m.x[2] >= 1)
    return m


def test_bobd_on_a_tiny_minlp_matches_brute_force():
    from scipy.optimize import minimize

    from stages.autoopt.m3.bobd import bobd

    best = math.inf
    for y1, y2 in itertools.product(range(5), repeat=2):
        f = lambda x: ((x[0] - 0.5 * y1) ** 2 + (x[1] - 0.5 * y2) ** 2 + (y1 - 3) ** 2  # noqa: E731
                       + 2 * (y2 - 1) ** 2 + x[0] + 0.3 * x[1] + abs(y1 - y2))
        r = minimize(f, [0.5, 0.5], method="SLSQP", bounds=[(-5, 5)] * 2,
                     constraints=[{"type": "ineq", "fun": lambda x: x[0] + x[1] - 1}])
        best = min(best, r.fun)
    res = bobd(_tiny_minlp(), budget=1500, seed=0, pop_size=10)
    assert sorted(res.upper_vars) == ["y[1]", "y[2]"]
    assert res.feasible and res.objective == pytest.approx(best, abs=1e-6)


def test_bobd_with_bleaq2_operators():
    """The g3pcx upper level (BLEAQ2's operators): on a continuous problem with a kink at the
    upper level (optimum 0 at u = 0.3, x = u) it gets within 1e-3; on the tiny MINLP it is never
    better than the brute-force optimum; the same answer twice for one seed."""
    import pyomo.environ as pe

    from stages.autoopt.m3.bobd import bobd

    m = pe.ConcreteModel()
    m.u = pe.Var(bounds=(-2, 2))
    m.x = pe.Var([1, 2, 3], bounds=(-5, 5))
    m.obj = pe.Objective(expr=abs(m.u - 0.3) + sum((m.x[i] - m.u) ** 2 for i in m.x))
    res = bobd(m, budget=1500, seed=0, pop_size=10, upper_ea="g3pcx")
    assert res.upper_vars == ["u"] and res.feasible and res.objective < 1e-3
    runs = [bobd(_tiny_minlp(), budget=1500, seed=0, pop_size=10, upper_ea="g3pcx") for _ in range(2)]
    assert runs[0].objective == runs[1].objective and runs[0].evals == runs[1].evals
    best = bobd(_tiny_minlp(), budget=1500, seed=0, pop_size=10)          # = brute force (test above)
    assert runs[0].feasible and runs[0].objective >= best.objective - 1e-9
    assert runs[0].extra["upper_ea"] == "g3pcx" and sorted(runs[0].upper_vars) == ["y[1]", "y[2]"]
    with pytest.raises(ValueError, match="upper_ea must be"):
        bobd(_tiny_minlp(), budget=100, seed=0, upper_ea="pso")


def test_ex1221_optimum_by_enumerating_the_binaries():
    from stages.autoopt.m3.problems import problems

    best = math.inf
    for y1, y2, y3 in itertools.product((0, 1), repeat=3):
        if 1.25 - y1 < 0 or 3 - 1.5 * y2 < 0:
            continue
        x1, x2 = math.sqrt(1.25 - y1), (3 - 1.5 * y2) ** (2 / 3)      # equalities fix x (x >= 0)
        if x1 + y1 <= 1.6 and 1.333 * x2 + y2 <= 3 and -y1 - y2 + y3 <= 0 and x1 <= 10 and x2 <= 10:
            best = min(best, 2 * x1 + 3 * x2 + 1.5 * y1 + 2 * y2 - 0.5 * y3)
    stated = next(p for p in problems() if p.name == "ex1221").optimum
    assert stated == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("name", ["int_f4", "int_f6", "int_f7"])
def test_small_integer_optima_by_enumeration(name):
    from stages.autoopt.m3.problems import problems

    p = next(q for q in problems() if q.name == name)
    m = p.build()
    best = math.inf
    for a, b in itertools.product(range(-15, 16), repeat=2):
        _set(m, {"x": [a, b]})
        best = min(best, _value_and_violation(m)[0])
    assert best == pytest.approx(p.optimum, abs=1e-9)


def test_newsvendor_saa_optimum_is_the_critical_fractile():
    from stages.autoopt.m3.problems import newsvendor_data, newsvendor_optimum

    val, point = newsvendor_optimum(5, 40, seed=5)
    cost, price, demand = newsvendor_data(5, 40, seed=5)
    for j in range(5):   # an optimal order is a (1 - c/p)-quantile of the demand samples
        frac = 1 - cost[j] / price[j]
        below = np.mean(demand[j] < point[j])
        at_or_below = np.mean(demand[j] <= point[j])
        assert below <= frac + 1e-12 <= at_or_below + 1e-12


# --------------------------------------------------------------------------- the benchmark's optima
def _problems():
    from stages.autoopt.m3.problems import problems

    return problems()


@pytest.mark.parametrize("prob", _problems(), ids=lambda p: p.name)
def test_stated_optimum_is_attained_and_not_beaten_by_random_search(prob):
    import pyomo.environ as pe

    from stages.autoopt.m3.core import is_bilevel
    from stages.autoopt.m3.pyomo_casadi import build_casadi

    m = prob.build()
    _set(m, prob.point)
    val, viol = _value_and_violation(m)
    assert val == pytest.approx(prob.optimum, rel=1e-9, abs=1e-9) and viol <= 1e-9
    rng = np.random.default_rng(0)
    if is_bilevel(m):
        # the stated y is the lower level's optimum for the stated x: no random y does better
        lobj = m.lower.obj
        low_at_point = pe.value(lobj.expr)
        ys = [v for v in m.y.values()]
        for _ in range(300):
            for v in ys:
                v.set_value(rng.uniform(v.lb, v.ub))
            assert pe.value(lobj.expr) >= low_at_point - 1e-12
        return
    cm = build_casadi(m)
    lb = np.maximum(cm.lb, -1e3)
    ub = np.minimum(cm.ub, 1e3)
    Z = rng.uniform(lb, ub, (2000, cm.n))
    Z[:, cm.integer] = np.round(Z[:, cm.integer])
    f, g = cm.evaluate(Z, np.zeros((len(Z), 0)))
    ok = cm.violation(g) <= 1e-9
    assert np.all(cm.user_value(1) * f[ok] >= prob.optimum - 1e-9 * max(1, abs(prob.optimum)))


# --------------------------------------------------------------------------- classification
def test_classification_on_hand_made_models():
    import pyomo.environ as pe

    from stages.autoopt.m3.bobd import classify, upper_variables

    m = pe.ConcreteModel()
    m.x = pe.Var(range(1, 7), bounds=(-3, 3))
    m.k = pe.Var(domain=pe.Integers, bounds=(0, 5))
    x = m.x
    m.obj = pe.Objective(expr=abs(x[1]) + pe.floor(x[2]) + pe.sin(x[3]) + x[4] ** 2 + x[5] * x[6] + m.k)
    m.c = pe.Constraint(expr=pe.Expr_if(IF=x[4] <= 0, THEN=x[4], ELSE=0) <= 1)
    r = classify(m)
    assert r["x[1]"] == {"nondifferentiable"} and r["x[2]"] == {"discontinuous"}
    assert r["x[3]"] == {"nonconvex"} and r["x[4]"] == {"discontinuous"}
    assert r["x[5]"] == r["x[6]"] == {"nonconvex"} and r["k"] == {"integer"}
    assert sorted(upper_variables(r)) == ["k", "x[1]", "x[2]", "x[4]"]
    assert sorted(upper_variables(r, nonconvex_upper=True)) == ["k"] + [f"x[{i}]" for i in range(1, 7)]


def test_solve_model_entry_point_on_a_generated_script():
    from stages.autoopt.data import grammar as G
    from stages.autoopt.m3.bobd import solve_model

    seed = next(s for s in range(500) if (p := G.generate(s, **GEN)).planted_value is not None
                and "discontinuous" in p.complexities and p.ptype == "single")
    prob = G.generate(seed, **GEN)
    out = solve_model(G.build_model(prob.pyomo()), budget=800, seed=0)
    json.dumps(out)
    assert set(out) >= {"objective", "feasible", "max_violation", "evals", "seconds", "x", "upper_vars"}
    assert out["upper_vars"] and out["feasible"]
    with pytest.raises(ValueError, match="budget must be >= 1"):
        solve_model(G.build_model(prob.pyomo()), budget=0, seed=0)


def test_solve_model_sends_a_generated_milp_to_highs():
    from stages.autoopt.data import grammar as G
    from stages.autoopt.m3.bobd import solve_model

    prob = next(p for s in range(500) if (p := G.generate(s, **GEN)).meta["family"] == "lp" and p.integer)
    out = solve_model(G.build_model(prob.pyomo()), budget=100, seed=0)
    assert out["solver"] == "highs" and out["feasible"]
    assert out["objective"] == pytest.approx(G.solve_linear(prob.pyomo()), rel=1e-9, abs=1e-9)


# --------------------------------------------------------------------------- params, determinism
def test_bad_m3_params_name_the_key(real_params):
    from stages.autoopt.params import AutoOptParams

    bad = copy.deepcopy(real_params)
    bad["autoopt"]["default"]["m3"]["budget"] = 5
    assert "autoopt.default.m3.budget = 5" in params_error("autoopt", AutoOptParams, bad)
    bad = copy.deepcopy(real_params)
    bad["autoopt"]["smoke"]["m3"]["problems"] = ["rosenbrock_7"]
    msg = params_error("autoopt", AutoOptParams, bad, profile="smoke")
    assert "autoopt.smoke.m3" in msg and "rosenbrock_7" in msg
    bad = copy.deepcopy(real_params)
    del bad["autoopt"]["paper"]["m3"]["feas_tol"]
    assert "autoopt.paper.m3.feas_tol" in params_error("autoopt", AutoOptParams, bad, profile="paper")
    bad = copy.deepcopy(real_params)
    bad["autoopt"]["default"]["m3"]["n_boot"] = 5
    assert "autoopt.default.m3.n_boot = 5" in params_error("autoopt", AutoOptParams, bad)
    bad = copy.deepcopy(real_params)
    bad["autoopt"]["default"]["m3"]["ci_level"] = 1.5
    assert "autoopt.default.m3.ci_level = 1.5" in params_error("autoopt", AutoOptParams, bad)
    bad = copy.deepcopy(real_params)
    bad["autoopt"]["default"]["m3"]["upper_ea"] = "pso"
    assert "autoopt.default.m3.upper_ea = 'pso'" in params_error("autoopt", AutoOptParams, bad)


def test_same_seed_same_rows():
    from stages.autoopt.m3.evaluate import run_problem
    from stages.autoopt.m3.problems import problems
    from stages.autoopt.params import M3Params

    mp = M3Params(runs=1, rel_tol=0.01, feas_tol=1e-6, budget=200, high_dim_budget=400, workers=1, bobd_pop=10, ga_pop=10, nsga_pop=10,
                  ipopt_max_iter=50, nonconvex_upper=False, upper_ea="ga", problems=[], multi=False, n_boot=100,
                  ci_level=0.9)
    probs = [p for p in problems() if p.name in ("nesterov_cr_5", "ex1221", "smd1_111")]
    runs = [[{k: v for k, v in r.items() if k != "seconds"} for p in probs for r in run_problem(p, 3, mp)]
            for _ in range(2)]
    assert runs[0] == runs[1] and len(runs[0]) == 9


# --------------------------------------------------------------------------- the grown set
def _cm(build):
    from stages.autoopt.m3.pyomo_casadi import build_casadi

    return build_casadi(build())


def _f(cm, Z):
    return cm.evaluate(np.atleast_2d(Z), np.zeros((len(np.atleast_2d(Z)), 0)))[0]


def test_the_complex_set_has_over_100_problems_and_the_rebuilt_high_dimensional_class():
    """problems(): the literature set's classes but its old high-dimensional one (every variable
    complicating), whose place the rebuilt class takes (issue 40); issue 8's other problems stay."""
    from stages.autoopt.m3.problems import COMPLEX_CLASSES, ORIGINAL, high_dim, literature_set, problems

    ps = problems()
    names = [p.name for p in ps]
    assert len(set(names)) == len(names)
    cx = [p for p in ps if p.cls in COMPLEX_CLASSES]
    assert len(cx) >= 100 and all(sum(p.cls == c for p in cx) >= 20 for c in COMPLEX_CLASSES)
    old_high = {p.name for p in literature_set() if p.cls == "high_dim"}
    assert len(old_high) == 26 and not old_high & set(names)
    assert {p.name for p in ps if p.cls == "high_dim"} == {p.name for p in high_dim()}
    assert ORIGINAL - old_high <= set(names)



def test_problem_names_are_the_sets_names_without_loading_pyomo():
    """The params check (every autoopt stage) reads problem_names(): problems()'s names in its
    order, found without building a model, so a stage that solves nothing never imports Pyomo."""
    import subprocess
    import sys

    from stages.autoopt.m3.problems import problem_names, problems

    assert problem_names() == [p.name for p in problems()]
    code = ("import sys; from stages.common.runtime.params import load_study; "
            "from stages.autoopt.params import AutoOptParams; load_study('autoopt', AutoOptParams); "
            "print(sorted(m for m in sys.modules if m.startswith('pyomo')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"

SHIFTABLE = ["rastrigin", "ackley", "griewank", "rosenbrock", "chained_lq", "chained_cb3_ii", "nesterov_cr",
             "hmm_maxq", "hmm_mxhilb", "hmm_cb3_i", "hmm_active_faces", "hmm_brown2", "hmm_crescent_i",
             "hmm_crescent_ii", "step_f6", "noncont_rastrigin", "int_f1", "int_sphere"]


@pytest.mark.parametrize("fam", SHIFTABLE)
def test_a_shift_moves_the_function_and_keeps_its_values(fam):
    """f_o(x + o) = f(x): the optimum moves by o with the same value (CEC 2005's shifted functions)."""
    from stages.autoopt.m3 import problems as P

    make = getattr(P, fam)
    n = 4
    integer = fam.startswith("int_")
    rng = np.random.default_rng(1)
    o = rng.integers(-3, 4, n).astype(float) if integer else rng.uniform(-0.4, 0.4, n)
    plain, shifted = _cm(make(n)), _cm(make(n, o=tuple(o)))
    X = rng.uniform(-1.5, 1.5, (50, n))
    if integer:
        X = np.round(X)
    assert np.allclose(_f(shifted, X + o), _f(plain, X), rtol=1e-12, atol=1e-12)


# each new family's closed-form optimum (at n = 2, shifted) against scipy's differential evolution
FAMILY_OPTIMA = {
    "hmm_maxq": (lambda n: 0.0, 0.0), "hmm_mxhilb": (lambda n: 0.0, 0.0),
    "hmm_cb3_i": (lambda n: 2.0 * (n - 1), 1.0), "hmm_active_faces": (lambda n: 0.0, 0.0),
    "hmm_brown2": (lambda n: 0.0, 0.0), "hmm_crescent_i": (lambda n: 0.0, 0.0),
    "hmm_crescent_ii": (lambda n: 0.0, 0.0), "rosenbrock": (lambda n: 0.0, 1.0),
    "chained_lq": (lambda n: -(n - 1) * math.sqrt(2), 1 / math.sqrt(2)),
    "noncont_rastrigin": (lambda n: 0.0, 0.0),
}


@pytest.mark.parametrize("fam", sorted(FAMILY_OPTIMA))
def test_family_optimum_matches_a_global_solver_on_a_tiny_instance(fam):
    from scipy.optimize import differential_evolution

    from stages.autoopt.m3 import problems as P

    opt, x0 = FAMILY_OPTIMA[fam]
    o = (0.3, -0.2)
    cm = _cm(getattr(P, fam)(2, o=o))
    assert _f(cm, np.array([x0, x0]) + o)[0] == pytest.approx(opt(2), abs=1e-12)
    lb, ub = np.maximum(cm.lb, -3), np.minimum(cm.ub, 3)
    polish = fam != "noncont_rastrigin"       # L-BFGS-B polishing across its jumps is meaningless
    res = differential_evolution(lambda Z: _f(cm, Z.T), list(zip(lb, ub)), vectorized=True, seed=0, tol=1e-12,
                                 maxiter=600, popsize=30, polish=polish, updating="deferred")
    assert res.fun >= opt(2) - 1e-9                       # nothing below the stated optimum ...
    assert res.fun == pytest.approx(opt(2), abs=1e-4)     # ... and the solver finds it


@pytest.mark.parametrize("name,literature,tol", [
    ("six_hump_camel", -1.0316285, 1e-7), ("branin", 0.397887, 1e-6), ("goldstein_price", 3.0, 1e-12),
    ("g01", -15.0, 1e-12), ("g04", -30665.539, 1e-3), ("g12", -1.0, 1e-12), ("g24", -5.508013, 1e-6)])
def test_fixed_problems_match_the_literature_and_a_local_solve(name, literature, tol):
    """The stated optimum is the literature's value (to its printed digits), and IPOPT started at
    the stated point finds nothing better (a KKT point)."""
    from stages.autoopt.m3.core import Ipopt
    from stages.autoopt.m3.problems import problems

    p = next(q for q in problems() if q.name == name)
    assert p.optimum == pytest.approx(literature, abs=tol)
    if name == "g12":      # the ball constraint's min() has no useful derivative at the optimum
        return
    cm = _cm(p.build)
    x, _ = Ipopt(cm, 200).solve(np.array(p.point["x"], float), np.zeros(0))
    f, g = cm.evaluate(x[None], np.zeros((1, 0)))
    assert cm.violation(g)[0] > 1e-7 or f[0] >= p.optimum - 1e-7 * max(1, abs(p.optimum))


@pytest.mark.parametrize("name", ["int_f3", "int_f3_s1", "int_f4_s1", "int_f5_s2", "int_f6_s1", "int_f7_s2"])
def test_integer_optima_by_local_enumeration(name):
    """Every integer point within 3 (F3, F5: 5 and 4 dimensions) or 12 of the stated optimum:
    none is better, and the stated point attains it."""
    from stages.autoopt.m3.problems import problems

    p = next(q for q in problems() if q.name == name)
    cm = _cm(p.build)
    x = np.array(p.point["x"], float)
    r = 3 if len(x) > 2 else 12
    grid = np.array(list(itertools.product(range(-r, r + 1), repeat=len(x))), float) + x
    vals = _f(cm, grid)
    assert vals.min() == pytest.approx(p.optimum, abs=1e-9)
    assert _f(cm, x)[0] == pytest.approx(p.optimum, abs=1e-9)


def test_step_and_dejong_optima_by_grid():
    from stages.autoopt.m3.problems import problems

    ps = {p.name: p for p in problems()}
    p = ps["step_f6_2s"]
    cm = _cm(p.build)
    o = np.array(p.meta["shift"])
    g = np.linspace(-100, 100, 801)
    Z = np.array(list(itertools.product(g, g)))
    assert _f(cm, Z).min() >= 0 and _f(cm, o + 0.49)[0] == 0 and _f(cm, o - 0.49)[0] == 0
    assert _f(cm, o + 0.51)[0] == 2.0 and _f(cm, o - 0.51)[0] == 2.0   # floor(z + 1/2) jumps at z = +-1/2
    p = ps["dejong_f3_3"]
    cm = _cm(p.build)
    g = np.linspace(-5.12, 5.12, 101)
    assert _f(cm, np.array(list(itertools.product(g, g, g)))).min() == p.optimum == -18.0


def test_ipopt_within_budget_reading_never_exceeds_the_budget():
    from stages.autoopt.m3.baselines import ipopt_multistart
    from stages.autoopt.m3.problems import problems

    p = next(q for q in problems() if q.name == "rastrigin_5s")
    res = ipopt_multistart(p.build(), budget=400, seed=0, max_iter=100)
    w = res.extra["within_budget"]
    assert res.extra["starts"] >= 2 and w["evals"] <= 400 <= res.evals
    assert w["objective"] >= res.objective - 1e-12        # a subset of the same starts


# --------------------------------------------------------------------------- the paired bootstrap
def test_paired_bootstrap_by_hand():
    from stages.autoopt.m3.stats import paired_bootstrap, sign_counts

    # constant differences: no spread
    r = paired_bootstrap([0.5] * 7, None, n_boot=500, level=0.95, seed=0)
    assert r["mean"] == r["low"] == r["high"] == 0.5 and r["n"] == 7
    # strata A = (1, 1) and B = (0, 1): a resample keeps two of each, so the mean is
    # (2 + 2 * mean_B) / 4 with mean_B in {0, 1/2, 1} w.p. 1/4, 1/2, 1/4 -> {0.5, 0.75, 1}
    r = paired_bootstrap([1, 1, 0, 1], ["a", "a", "b", "b"], n_boot=40000, level=0.95, seed=1)
    assert r["mean"] == 0.75 and (r["low"], r["high"]) == (0.5, 1.0)
    r = paired_bootstrap([1, 1, 0, 1], ["a", "a", "b", "b"], n_boot=40000, level=0.4, seed=1)
    assert (r["low"], r["high"]) == (0.75, 0.75)       # the middle 40% lies in the mass 1/2 at 0.75
    # unstratified, two differences (1, 0): the mean of two draws is 0, 1/2, 1 w.p. 1/4, 1/2, 1/4
    r = paired_bootstrap([1, 0], None, n_boot=40000, level=0.95, seed=2)
    assert (r["low"], r["high"]) == (0.0, 1.0)
    assert sign_counts([0.5, -1, 0, 0, 2]) == {"better": 2, "worse": 1, "tied": 2}


def test_paired_bootstrap_is_scipys_bca_with_a_sample_per_class():
    from scipy import stats

    from stages.autoopt.m3.stats import paired_bootstrap

    rng = np.random.default_rng(0)
    d = rng.choice([-1.0, 0.0, 0.0, 1.0, 1.0], size=60)
    ours = paired_bootstrap(d, None, n_boot=5000, level=0.9, seed=3)
    ref = stats.bootstrap((d,), np.mean, n_resamples=5000, confidence_level=0.9, method="BCa",
                          random_state=np.random.default_rng(3)).confidence_interval
    assert (ours["low"], ours["high"]) == pytest.approx((ref.low, ref.high), rel=1e-12)
    # strata: one sample each, resampled on its own; the one-problem class "c" stays as it is
    strata = ["a"] * 20 + ["b"] * 39 + ["c"]
    ours = paired_bootstrap(d, strata, n_boot=5000, level=0.9, seed=3)
    ref = stats.bootstrap((d[:20], d[20:59]), lambda a, b, axis: (a.sum(axis) + b.sum(axis) + d[59]) / 60,
                          vectorized=True, n_resamples=5000, confidence_level=0.9, method="BCa",
                          random_state=np.random.default_rng(3)).confidence_interval
    assert (ours["low"], ours["high"]) == pytest.approx((ref.low, ref.high), rel=1e-12)


def old_paired_bootstrap(d, strata, n_boot, level, seed):
    """The stratified percentile bootstrap m3/stats.py used before scipy's BCa (reference copy):
    the interval and the resampled means."""
    labels = np.unique(np.asarray(strata), return_inverse=True)[1]
    rng = np.random.default_rng(seed)
    total = np.zeros(n_boot)
    for s in np.unique(labels):
        ds = d[labels == s]
        total += ds[rng.integers(0, ds.size, size=(n_boot, ds.size))].sum(axis=1)
    means = total / d.size
    alpha = (1 - level) / 2
    return tuple(float(q) for q in np.quantile(means, [alpha, 1 - alpha])), means


def test_paired_bootstrap_agrees_with_the_old_percentile_bootstrap():
    """The complex set's shape (default profile): 115 problems in five classes of 20-26, one run a
    problem, so each difference is -1, 0 or +1, mostly ties, with class-dependent wins and losses.
    scipy's percentile interval draws the same resamples from the same seed (a sample per class,
    in the same order), so it equals the old one; BCa moves each end by its bias and skew
    correction (z0 + a z^2 in normal units), here under 0.25 sd of the bootstrap distribution
    (the mean of 115 bounded differences is nearly symmetric), so BCa is held to 0.5 sd."""
    from stages.autoopt.m3.stats import paired_bootstrap

    rng = np.random.default_rng(20)
    sizes, win, loss = (26, 24, 23, 22, 20), (0.15, 0.3, 0.1, 0.05, 0.45), (0.15, 0.05, 0.2, 0.25, 0.0)
    d = np.concatenate([rng.choice([1.0, -1.0, 0.0], p=[w, lo, 1 - w - lo], size=k)
                        for k, w, lo in zip(sizes, win, loss)])
    strata = [c for c, k in zip("abcde", sizes) for _ in range(k)]
    old, means = old_paired_bootstrap(d, strata, 10_000, 0.95, seed=0)
    pct = paired_bootstrap(d, strata, n_boot=10_000, level=0.95, seed=0, method="percentile")
    assert (pct["low"], pct["high"]) == pytest.approx(old, rel=1e-12)
    bca = paired_bootstrap(d, strata, n_boot=10_000, level=0.95, seed=0)
    assert bca["low"] < bca["high"]                                  # BCa defined: not the point
    assert np.abs(np.subtract((bca["low"], bca["high"]), old)).max() <= 0.5 * means.std()


def test_paired_bootstrap_rejects_bad_input():
    from stages.autoopt.m3.stats import paired_bootstrap

    with pytest.raises(ValueError, match="non-empty"):
        paired_bootstrap([], None, n_boot=10, level=0.9, seed=0)
    with pytest.raises(ValueError, match="level must lie"):
        paired_bootstrap([1.0], None, n_boot=10, level=1.2, seed=0)
    with pytest.raises(ValueError, match="strata has 1 labels for 2"):
        paired_bootstrap([1.0, 0.0], ["a"], n_boot=10, level=0.9, seed=0)
    with pytest.raises(ValueError, match="finite"):
        paired_bootstrap([1.0, float("nan")], None, n_boot=10, level=0.9, seed=0)


def test_paired_margin_from_rows_by_hand():
    """Two problems x two runs: BOBD (1, 1) and (0, 1), IPOPT (1, 0) and (0, 0) -> per-problem
    differences 1/2 and 1/2 -> mean 1/2 (= the pooled margin 3/4 - 1/4), no spread."""
    from stages.autoopt.m3.evaluate import paired
    from stages.autoopt.params import M3Params

    mp = M3Params(runs=2, rel_tol=0.01, feas_tol=1e-6, budget=200, high_dim_budget=400, workers=1, bobd_pop=10, ga_pop=10, nsga_pop=10,
                  ipopt_max_iter=50, nonconvex_upper=False, upper_ea="ga", problems=[], multi=False, n_boot=200,
                  ci_level=0.9)
    succ = {("p", "bobd"): (1, 1), ("q", "bobd"): (0, 1), ("p", "ipopt"): (1, 0), ("q", "ipopt"): (0, 0),
            ("p", "ga"): (0, 0), ("q", "ga"): (0, 0)}
    rows = [{"problem": pr, "class": "integer" if pr == "p" else "nonconvex", "method": m, "seed": s,
             "success": bool(v[s])} for (pr, m), v in succ.items() for s in (0, 1)]
    r = paired(rows, mp, 0, "ipopt")
    assert (r["mean"], r["low"], r["high"]) == (0.5, 0.5, 0.5)
    assert (r["better"], r["worse"], r["tied"]) == (2, 0, 0)


# --------------------------------------------------------------------------- issue 40: seeds, candidate class
def test_run_seeds_of_different_verdict_seeds_never_collide_and_are_not_calibration_like():
    """The old draw seed was ``seed + r``: verdict seed 1 run 0 was verdict seed 0 run 1."""
    from stages.autoopt.m3.evaluate import run_seed

    drawn = [run_seed(s, r) for s in range(5) for r in range(20)]
    assert len(set(drawn)) == len(drawn)
    assert run_seed(0, 1) != run_seed(1, 0)


def test_each_seeds_figures_depend_only_on_its_own_rows():
    """seed_metrics of seed 1 is the same whether seed 0 ran beside it or not, and differs from a
    fabricated set of rows (the figure reads the rows it is given)."""
    from stages.autoopt.m3.evaluate import run_problem, run_seed, seed_metrics
    from stages.autoopt.m3.problems import problems
    from stages.autoopt.params import M3Params

    mp = M3Params(runs=1, rel_tol=0.01, feas_tol=1e-6, budget=150, high_dim_budget=300, workers=1, bobd_pop=10, ga_pop=10, nsga_pop=10,
                  ipopt_max_iter=30, nonconvex_upper=True, upper_ea="ga", problems=[], multi=False, n_boot=100,
                  ci_level=0.9)
    probs = [p for p in problems() if p.name in ("step_f6_2s", "int_f4")]
    rows = {s: [r for p in probs for r in run_problem(p, run_seed(s, 0), mp)] for s in (0, 1)}
    alone = [r for p in probs for r in run_problem(p, run_seed(1, 0), mp)]
    def strip(m):   # every figure but the wall times
        return ({k: v for k, v in m.items() if k not in ("complex", "classes")}
                | {"classes": {c: {k: {f: x for f, x in d.items() if f != "seconds"} for k, d in s_.items()}
                               for c, s_ in m["classes"].items()},
                   "success": m["complex"]["success"], "margin": m["complex"]["margin_vs_ipopt"]})
    assert strip(seed_metrics(rows[1], mp, 1)) == strip(seed_metrics(alone, mp, 1))
    flipped = [{**r, "success": not r["success"]} for r in alone]
    assert seed_metrics(flipped, mp, 1)["complex"]["success"] != seed_metrics(alone, mp, 1)["complex"]["success"]


def test_ipopt_is_stuck_on_a_step_function():
    """Why m3_some_class_beats_ipopt could not fail: IPOPT's gradient of a step function is zero,
    so it stops where it starts; BOBD's upper level samples (it reaches the optimum here)."""
    from stages.autoopt.m3.baselines import ipopt_multistart
    from stages.autoopt.m3.bobd import bobd
    from stages.autoopt.m3.problems import step_f6

    build = step_f6(2, o=(30.0, -40.0))
    ri = ipopt_multistart(build(), budget=40, seed=5, max_iter=50, feas_tol=1e-6)
    rb = bobd(build(), budget=800, seed=5, pop_size=20, max_iter=50, feas_tol=1e-6)
    assert ri.objective > 0.0 and rb.objective == 0.0


def test_high_dim_class_states_its_optimum():
    """problems.high_dim(): the stated point attains the stated optimum, random points of the box do
    not beat it, and only the k hard variables are complicating (the smooth block goes to IPOPT)."""
    import pyomo.environ as pe

    from stages.autoopt.m3.bobd import classify, upper_variables
    from stages.autoopt.m3.problems import high_dim

    probs = high_dim()
    assert len(probs) == 20 and {p.cls for p in probs} == {"high_dim"}
    rng = np.random.default_rng(0)
    for p in probs[:10]:
        m = p.build()
        for comp, vals in p.point.items():
            for v, x in zip(getattr(m, comp).values(), vals):
                v.set_value(x, skip_validation=True)
        assert abs(pe.value(m.obj) - p.optimum) <= 1e-6 * max(1.0, abs(p.optimum)), p.name
        up = upper_variables(classify(m), nonconvex_upper=True)
        assert sorted(up) == sorted(f"x[{i}]" for i in range(1, p.meta["k"] + 1)), (p.name, up)
        for _ in range(20):
            for v in m.component_data_objects(pe.Var):
                x = rng.uniform(v.lb, v.ub)
                v.set_value(round(x) if v.is_integer() else x, skip_validation=True)
            assert pe.value(m.obj) >= p.optimum - 1e-9, p.name


def test_pool_gives_the_rows_of_one_process_in_the_jobs_order():
    """run_jobs on two forked processes returns what one process returns, in the jobs' order (each
    job's draws come from its own verdict seed and run, whichever worker runs it)."""
    from stages.autoopt.m3.evaluate import run_jobs
    from stages.autoopt.m3.problems import problems
    from stages.autoopt.params import M3Params

    kw = dict(runs=1, rel_tol=0.01, feas_tol=1e-6, budget=120, high_dim_budget=240, bobd_pop=10, ga_pop=10,
              nsga_pop=10, ipopt_max_iter=20, nonconvex_upper=True, upper_ea="ga", problems=[], multi=False,
              n_boot=100, ci_level=0.9)
    names = [p.name for p in problems()]
    jobs = [(s, names.index(n), 0) for s in (3, 4) for n in ("step_f6_2s", "int_f4")]

    def strip(rows):
        return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]
    one = strip(run_jobs(jobs, M3Params(workers=1, **kw), "one"))
    two = strip(run_jobs(jobs, M3Params(workers=2, **kw), "two"))
    assert one == two and [(r["verdict_seed"], r["problem"]) for r in one[::3]] == [
        (3, "step_f6_2s"), (3, "int_f4"), (4, "step_f6_2s"), (4, "int_f4")]


def test_the_high_dimensional_class_gets_its_own_budget():
    from types import SimpleNamespace as NS

    from stages.autoopt.m3.evaluate import budget_of

    mp = NS(budget=3000, high_dim_budget=30000)
    assert budget_of(NS(cls="high_dim"), mp) == 30000 and budget_of(NS(cls="integer"), mp) == 3000
