"""M3: the Pyomo -> casadi converter against Pyomo's own values, IPOPT against closed forms, BOBD
against brute-force enumeration, every benchmark problem's stated optimum, the variable
classification on hand-made models, bad params, and determinism (in process and at smoke size)."""
from __future__ import annotations

import copy
import itertools
import json
import math
import random
import warnings

import numpy as np
import pytest

from tests.common.conftest import params_error, real_params  # noqa: F401 - shared fixture

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


def test_same_seed_same_rows():
    from stages.autoopt.m3.evaluate import run_problem
    from stages.autoopt.m3.problems import problems
    from stages.autoopt.params import M3Params

    mp = M3Params(runs=1, rel_tol=0.01, feas_tol=1e-6, budget=200, bobd_pop=10, ga_pop=10, nsga_pop=10,
                  ipopt_max_iter=50, nonconvex_upper=False, problems=[], multi=False)
    probs = [p for p in problems() if p.name in ("nesterov_cr_5", "ex1221", "smd1_111")]
    runs = [[{k: v for k, v in r.items() if k != "seconds"} for p in probs for r in run_problem(p, 3, mp)]
            for _ in range(2)]
    assert runs[0] == runs[1] and len(runs[0]) == 9
