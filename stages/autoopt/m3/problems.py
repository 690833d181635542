"""M3's benchmark: Pyomo models with known optima, in classes of difficulty.

Every problem states its optimum (as the model states the objective: max problems are not
negated), a point attaining it, and where both come from. ``COMPLEX_CLASSES`` (fixed before any
method was run) is "the complex set" of issue 8's claim: the classes whose difficulty is
non-convexity, non-differentiability, discontinuity, integrality or dimension. Bilevel and
stochastic problems are reported as their own classes, outside the complex set.

Sources (optima and points):
* Rastrigin, Ackley, Griewank: global minimum 0 at the origin (closed form; e.g. Yao, Liu, Lin,
  "Evolutionary programming made faster", IEEE TEC 3(2), 1999, f9-f11). Ackley's square root
  gets +1e-12 inside (its derivative is infinite at 0), which moves its minimum to
  20 (1 - exp(-2e-7)) ~ 4e-6, the value stated.
* g06, g08, g11: CEC 2006 constrained suite (Liang et al., "Problem definitions and evaluation
  criteria for the CEC 2006 special session on constrained real-parameter optimization", 2006);
  best known values and points from that report.
* Chained LQ, Chained CB3 II: Haarala, Miettinen, Makela, "New limited memory bundle method for
  large-scale nonsmooth optimization", Optim. Methods Softw. 19(6), 2004 (optima -(n-1)sqrt 2 at
  x_i = 1/sqrt 2, and 2(n-1) at x_i = 1).
* Nesterov's Chebyshev-Rosenbrock (nonsmooth): Gurbuzbalaban, Overton, "On Nesterov's nonsmooth
  Chebyshev-Rosenbrock functions", Nonlinear Analysis 75(3), 2012: minimum 0 at x = 1.
* Step (f6 of Yao, Liu, Lin 1999): sum floor(x_i + 0.5)^2, minimum 0 on [-0.5, 0.5)^n.
  De Jong's F3 (De Jong 1975): sum floor(x_i) on [-5.12, 5.12]^n, minimum -6n at x_i < -5.
* Integer problems F4-F7 (Glankwahmdee et al. 1979; Rao 1996) as collected by Laskari,
  Parsopoulos, Vrahatis, "Particle swarm optimization for integer programming", CEC 2002 (each
  checked here by enumeration of the box in tests); integer sphere (F2 there): 0 at 0.
* ex1221: Kocis, Grossmann, Ind. Eng. Chem. Res. 27, 1988 (MINLPLib ex1221), optimum 7.6672;
  checked here by enumerating the binaries and solving the rest in closed form (tests).
* SMD1, SMD2: Sinha, Malo, Deb, "Test problem construction for single-objective bilevel
  optimization", Evolutionary Computation 22(3), 2014: upper optimum 0 at xu = 0, xl = 0 (SMD2:
  xl2 = 1). Open bounds of xl2 are closed a little inside (they do not bind at the optimum).
* Multi-objective: ZDT1-3 (Zitzler, Deb, Thiele 2000), judged by hypervolume against pymoo's
  NSGA-II with the same evaluations (reference point HV_REF).
* Newsvendor by sample average (Shapiro, Dentcheva, Ruszczynski, "Lectures on stochastic
  programming", 2009, Sec. 1.2.1): demand samples drawn here with a fixed seed; the stated
  optimum is the SAA problem's (a separable piecewise-linear convex function, minimised exactly
  by enumerating its breakpoints, the samples), not the true problem's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

CLASSES = ("nonconvex", "nondifferentiable", "discontinuous", "integer", "high_dim", "bilevel", "stochastic")
COMPLEX_CLASSES = ("nonconvex", "nondifferentiable", "discontinuous", "integer", "high_dim")


@dataclass
class BenchProblem:
    name: str
    cls: str
    build: Callable[[], object]          # -> a fresh Pyomo ConcreteModel
    optimum: float
    point: dict[str, list[float]]        # Var component name -> values attaining the optimum
    source: str
    meta: dict = field(default_factory=dict)


def _model(n: int, lo: float, hi: float, integer: bool = False, name: str = "x"):
    import pyomo.environ as pe

    m = pe.ConcreteModel()
    setattr(m, name, pe.Var(pe.RangeSet(1, n), domain=pe.Integers if integer else pe.Reals, bounds=(lo, hi),
                            initialize=0.0))
    return m


def _max(*args):
    from pyomo.core.expr.numeric_expr import MaxExpression

    return MaxExpression(args)


# --------------------------------------------------------------------------- non-convex
def rastrigin(n: int):
    import pyomo.environ as pe

    def build():
        m = _model(n, -5.12, 5.12)
        m.obj = pe.Objective(expr=10 * n + sum(m.x[i] ** 2 - 10 * pe.cos(2 * math.pi * m.x[i]) for i in m.x))
        return m
    return build


def ackley(n: int):
    import pyomo.environ as pe

    def build():
        m = _model(n, -32.768, 32.768)
        m.obj = pe.Objective(expr=-20 * pe.exp(-0.2 * pe.sqrt(sum(m.x[i] ** 2 for i in m.x) / n + 1e-12))
                             - pe.exp(sum(pe.cos(2 * math.pi * m.x[i]) for i in m.x) / n) + 20 + math.e)
        return m
    return build


def griewank(n: int):
    import pyomo.environ as pe

    def build():
        m = _model(n, -600, 600)
        prod = 1
        for i in m.x:
            prod = prod * pe.cos(m.x[i] / math.sqrt(i))
        m.obj = pe.Objective(expr=1 + sum(m.x[i] ** 2 for i in m.x) / 4000 - prod)
        return m
    return build


def g06():
    import pyomo.environ as pe

    def build():
        m = pe.ConcreteModel()
        m.x = pe.Var(pe.RangeSet(1, 2), bounds=lambda m, i: (13, 100) if i == 1 else (0, 100), initialize=50)
        m.obj = pe.Objective(expr=(m.x[1] - 10) ** 3 + (m.x[2] - 20) ** 3)
        m.c1 = pe.Constraint(expr=-(m.x[1] - 5) ** 2 - (m.x[2] - 5) ** 2 + 100 <= 0)
        m.c2 = pe.Constraint(expr=(m.x[1] - 6) ** 2 + (m.x[2] - 5) ** 2 - 82.81 <= 0)
        return m
    return build


def g08():
    import pyomo.environ as pe

    def build():
        m = _model(2, 0, 10)
        m.obj = pe.Objective(expr=-(pe.sin(2 * math.pi * m.x[1]) ** 3 * pe.sin(2 * math.pi * m.x[2]))
                             / (m.x[1] ** 3 * (m.x[1] + m.x[2]) + 1e-12))
        m.c1 = pe.Constraint(expr=m.x[1] ** 2 - m.x[2] + 1 <= 0)
        m.c2 = pe.Constraint(expr=1 - m.x[1] + (m.x[2] - 4) ** 2 <= 0)
        return m
    return build


def g11():
    import pyomo.environ as pe

    def build():
        m = _model(2, -1, 1)
        m.obj = pe.Objective(expr=m.x[1] ** 2 + (m.x[2] - 1) ** 2)
        m.c1 = pe.Constraint(expr=m.x[2] - m.x[1] ** 2 == 0)
        return m
    return build


# --------------------------------------------------------------------------- non-differentiable
def chained_lq(n: int):
    import pyomo.environ as pe

    def build():
        m = _model(n, -2, 2)
        m.obj = pe.Objective(expr=sum(_max(-m.x[i] - m.x[i + 1],
                                           -m.x[i] - m.x[i + 1] + m.x[i] ** 2 + m.x[i + 1] ** 2 - 1)
                                      for i in range(1, n)))
        return m
    return build


def chained_cb3_ii(n: int):
    import pyomo.environ as pe

    def build():
        m = _model(n, -2, 2)
        r = range(1, n)
        m.obj = pe.Objective(expr=_max(sum(m.x[i] ** 4 + m.x[i + 1] ** 2 for i in r),
                                       sum((2 - m.x[i]) ** 2 + (2 - m.x[i + 1]) ** 2 for i in r),
                                       sum(2 * pe.exp(-m.x[i] + m.x[i + 1]) for i in r)))
        return m
    return build


def nesterov_cr(n: int):
    import pyomo.environ as pe

    def build():
        m = _model(n, -2, 2)
        m.obj = pe.Objective(expr=0.25 * abs(m.x[1] - 1)
                             + sum(abs(m.x[i + 1] - 2 * abs(m.x[i]) + 1) for i in range(1, n)))
        return m
    return build


# --------------------------------------------------------------------------- discontinuous
def step_f6(n: int):
    import pyomo.environ as pe

    def build():
        m = _model(n, -100, 100)
        m.obj = pe.Objective(expr=sum(pe.floor(m.x[i] + 0.5) ** 2 for i in m.x))
        return m
    return build


def dejong_f3(n: int):
    import pyomo.environ as pe

    def build():
        m = _model(n, -5.12, 5.12)
        m.obj = pe.Objective(expr=sum(pe.floor(m.x[i]) for i in m.x))
        return m
    return build


# --------------------------------------------------------------------------- integer
def int_f4():
    import pyomo.environ as pe

    def build():
        m = _model(2, -100, 100, integer=True)
        m.obj = pe.Objective(expr=(9 * m.x[1] ** 2 + 2 * m.x[2] ** 2 - 11) ** 2
                             + (3 * m.x[1] + 4 * m.x[2] ** 2 - 7) ** 2)
        return m
    return build


def int_f5():
    import pyomo.environ as pe

    def build():
        m = _model(4, -100, 100, integer=True)
        x = m.x
        m.obj = pe.Objective(expr=(x[1] + 10 * x[2]) ** 2 + 5 * (x[3] - x[4]) ** 2 + (x[2] - 2 * x[3]) ** 4
                             + 10 * (x[1] - x[4]) ** 4)
        return m
    return build


def int_f6():
    import pyomo.environ as pe

    def build():
        m = _model(2, -100, 100, integer=True)
        x = m.x
        m.obj = pe.Objective(expr=2 * x[1] ** 2 + 3 * x[2] ** 2 + 4 * x[1] * x[2] - 6 * x[1] - 3 * x[2])
        return m
    return build


def int_f7():
    import pyomo.environ as pe

    def build():
        m = _model(2, -100, 100, integer=True)
        x = m.x
        m.obj = pe.Objective(expr=-3803.84 - 138.08 * x[1] - 232.92 * x[2] + 123.08 * x[1] ** 2
                             + 203.64 * x[2] ** 2 + 182.25 * x[1] * x[2])
        return m
    return build


def int_sphere(n: int):
    import pyomo.environ as pe

    def build():
        m = _model(n, -100, 100, integer=True)
        m.obj = pe.Objective(expr=sum(m.x[i] ** 2 for i in m.x))
        return m
    return build


def ex1221():
    import pyomo.environ as pe

    def build():
        m = pe.ConcreteModel()
        m.x = pe.Var(pe.RangeSet(1, 2), bounds=(0, 10), initialize=1.0)
        m.y = pe.Var(pe.RangeSet(1, 3), domain=pe.Binary, initialize=0)
        x, y = m.x, m.y
        m.obj = pe.Objective(expr=2 * x[1] + 3 * x[2] + 1.5 * y[1] + 2 * y[2] - 0.5 * y[3])
        m.c1 = pe.Constraint(expr=x[1] ** 2 + y[1] == 1.25)
        m.c2 = pe.Constraint(expr=x[2] ** 1.5 + 1.5 * y[2] == 3)
        m.c3 = pe.Constraint(expr=x[1] + y[1] <= 1.6)
        m.c4 = pe.Constraint(expr=1.333 * x[2] + y[2] <= 3)
        m.c5 = pe.Constraint(expr=-y[1] - y[2] + y[3] <= 0)
        return m
    return build


# --------------------------------------------------------------------------- bilevel (SMD)
def smd(k: int, p: int, q: int, r: int):
    """SMD1 / SMD2 with p, q, r (x = [xu1 (p), xu2 (r)], y = [xl1 (q), xl2 (r)])."""
    import pyomo.environ as pe

    def build():
        m = pe.ConcreteModel()
        if k == 1:
            xb = lambda m, i: (-5, 10)                                   # noqa: E731
            yb = lambda m, j: (-5, 10) if j <= q else (-1.5, 1.5)        # noqa: E731
        else:
            xb = lambda m, i: (-5, 10) if i <= p else (-5, 1)            # noqa: E731
            yb = lambda m, j: (-5, 10) if j <= q else (1e-3, math.e)     # noqa: E731
        m.x = pe.Var(pe.RangeSet(1, p + r), bounds=xb, initialize=0.5)
        m.y = pe.Var(pe.RangeSet(1, q + r), bounds=yb, initialize=0.5)
        xu1 = [m.x[i] for i in range(1, p + 1)]
        xu2 = [m.x[p + i] for i in range(1, r + 1)]
        xl1 = [m.y[j] for j in range(1, q + 1)]
        xl2 = [m.y[q + j] for j in range(1, r + 1)]
        fn = pe.tan if k == 1 else pe.log
        s = 1 if k == 1 else -1
        coupling = sum((a - fn(b)) ** 2 for a, b in zip(xu2, xl2))
        m.obj = pe.Objective(expr=sum(v ** 2 for v in xu1) + s * sum(v ** 2 for v in xl1)
                             + sum(v ** 2 for v in xu2) + s * coupling)
        m.lower = pe.Block()
        m.lower.obj = pe.Objective(expr=sum(v ** 2 for v in xu1) + sum(v ** 2 for v in xl1) + coupling)
        m.lower.obj.deactivate()
        return m
    return build


# --------------------------------------------------------------------------- stochastic (SAA)
def newsvendor_data(n: int, samples: int, seed: int):
    rng = np.random.default_rng(seed)
    cost = rng.uniform(1, 5, n).round(2)
    price = (cost * rng.uniform(1.5, 3, n)).round(2)
    demand = rng.uniform(20, 150, (n, samples)).round(1)
    return cost, price, demand


def newsvendor(n: int, samples: int, seed: int):
    import pyomo.environ as pe

    cost, price, demand = newsvendor_data(n, samples, seed)

    def build():
        m = _model(n, 0, 200)
        x = m.x
        m.obj = pe.Objective(expr=sum(float(cost[j]) * x[j + 1] for j in range(n))
                             - sum(float(price[j]) / samples
                                   * pe.Expr_if(IF=x[j + 1] <= float(demand[j, s]), THEN=x[j + 1],
                                                ELSE=float(demand[j, s]))
                                   for j in range(n) for s in range(samples)))
        return m
    return build


def newsvendor_optimum(n: int, samples: int, seed: int) -> tuple[float, list[float]]:
    """The SAA optimum by enumerating each product's breakpoints (its demand samples and 0)."""
    cost, price, demand = newsvendor_data(n, samples, seed)
    total, point = 0.0, []
    for j in range(n):
        cands = np.r_[0.0, demand[j]]
        vals = [cost[j] * c - price[j] * np.minimum(c, demand[j]).mean() for c in cands]
        k = int(np.argmin(vals))
        total += vals[k]
        point.append(float(cands[k]))
    return float(total), point


# --------------------------------------------------------------------------- multi-objective (ZDT)
def zdt(k: int, n: int):
    """ZDT1-3 (Zitzler, Deb, Thiele, "Comparison of multiobjective evolutionary algorithms",
    Evolutionary Computation 8(2), 2000): x in [0, 1]^n; Pareto front at g = 1."""
    import pyomo.environ as pe

    def build():
        m = _model(n, 0, 1)
        x = m.x
        g = 1 + 9 * sum(x[i] for i in range(2, n + 1)) / (n - 1)
        m.obj1 = pe.Objective(expr=x[1])
        if k == 1:
            f2 = g * (1 - pe.sqrt(x[1] / g))
        elif k == 2:
            f2 = g * (1 - (x[1] / g) ** 2)
        else:
            f2 = g * (1 - pe.sqrt(x[1] / g) - x[1] / g * pe.sin(10 * math.pi * x[1]))
        m.obj2 = pe.Objective(expr=f2)
        return m
    return build


def zdt_numpy(k: int):
    """The same functions on a batch X (k, n) for pymoo's NSGA-II (the reference method)."""
    def F(X):
        n = X.shape[1]
        g = 1 + 9 * X[:, 1:].sum(1) / (n - 1)
        f1 = X[:, 0]
        r = f1 / g
        f2 = g * (1 - np.sqrt(r)) if k == 1 else g * (1 - r ** 2) if k == 2 else \
            g * (1 - np.sqrt(r) - r * np.sin(10 * math.pi * f1))
        return np.column_stack([f1, f2])
    return F


MULTI = {"zdt1_10": (1, 10), "zdt2_10": (2, 10), "zdt3_10": (3, 10)}
HV_REF = (1.1, 1.1)      # hypervolume reference point (f1 in [0, 1], f2 <= 1 on the fronts)


# --------------------------------------------------------------------------- the set
def problems() -> list[BenchProblem]:
    r2 = 1 / math.sqrt(2)
    cec = "CEC 2006 (Liang et al. 2006)"
    hmm = "Haarala, Miettinen, Makela 2004"
    lpv = "Laskari, Parsopoulos, Vrahatis 2002"
    yao = "Yao, Liu, Lin 1999"
    out = [
        BenchProblem("rastrigin_10", "nonconvex", rastrigin(10), 0.0, {"x": [0.0] * 10}, f"{yao} f9"),
        BenchProblem("ackley_10", "nonconvex", ackley(10), 20 * (1 - math.exp(-0.2e-6)), {"x": [0.0] * 10},
                     f"{yao} f10"),
        BenchProblem("griewank_10", "nonconvex", griewank(10), 0.0, {"x": [0.0] * 10}, f"{yao} f11"),
        BenchProblem("g06", "nonconvex", g06(), -6961.81387558015,
                     {"x": [14.095, 0.8429607892154795668]}, cec),
        BenchProblem("g08", "nonconvex", g08(), -0.0958250414180359,
                     {"x": [1.22797135260752599, 4.24537336612274885]}, cec),
        BenchProblem("g11", "nonconvex", g11(), 0.75, {"x": [r2, 0.5]}, cec),
        BenchProblem("chained_lq_10", "nondifferentiable", chained_lq(10), -9 * math.sqrt(2),
                     {"x": [r2] * 10}, hmm),
        BenchProblem("chained_cb3_ii_10", "nondifferentiable", chained_cb3_ii(10), 18.0, {"x": [1.0] * 10}, hmm),
        BenchProblem("nesterov_cr_5", "nondifferentiable", nesterov_cr(5), 0.0, {"x": [1.0] * 5},
                     "Gurbuzbalaban, Overton 2012"),
        BenchProblem("step_f6_10", "discontinuous", step_f6(10), 0.0, {"x": [0.0] * 10}, f"{yao} f6"),
        BenchProblem("dejong_f3_5", "discontinuous", dejong_f3(5), -30.0, {"x": [-5.12] * 5}, "De Jong 1975 F3"),
        BenchProblem("int_f4", "integer", int_f4(), 0.0, {"x": [1.0, 1.0]}, f"{lpv} F4"),
        BenchProblem("int_f5", "integer", int_f5(), 0.0, {"x": [0.0] * 4}, f"{lpv} F5"),
        BenchProblem("int_f6", "integer", int_f6(), -6.0, {"x": [2.0, -1.0]}, f"{lpv} F6"),
        BenchProblem("int_f7", "integer", int_f7(), -3833.12, {"x": [0.0, 1.0]}, f"{lpv} F7"),
        BenchProblem("ex1221", "integer", ex1221(), 2 * math.sqrt(1.25) + 3 * 1.5 ** (2 / 3) + 1.5,
                     {"x": [math.sqrt(1.25), 1.5 ** (2 / 3)], "y": [0.0, 1.0, 1.0]},
                     "Kocis, Grossmann 1988 (MINLPLib ex1221)"),
        BenchProblem("rastrigin_50", "high_dim", rastrigin(50), 0.0, {"x": [0.0] * 50}, f"{yao} f9"),
        BenchProblem("chained_lq_100", "high_dim", chained_lq(100), -99 * math.sqrt(2), {"x": [r2] * 100}, hmm),
        BenchProblem("step_f6_100", "high_dim", step_f6(100), 0.0, {"x": [0.0] * 100}, f"{yao} f6"),
        BenchProblem("int_sphere_50", "high_dim", int_sphere(50), 0.0, {"x": [0.0] * 50}, f"{lpv} F2"),
        BenchProblem("smd1_111", "bilevel", smd(1, 1, 1, 1), 0.0, {"x": [0.0, 0.0], "y": [0.0, 0.0]},
                     "Sinha, Malo, Deb 2014 SMD1"),
        BenchProblem("smd1_221", "bilevel", smd(1, 2, 2, 1), 0.0, {"x": [0.0] * 3, "y": [0.0] * 3},
                     "Sinha, Malo, Deb 2014 SMD1"),
        BenchProblem("smd2_111", "bilevel", smd(2, 1, 1, 1), 0.0, {"x": [0.0, 0.0], "y": [0.0, 1.0]},
                     "Sinha, Malo, Deb 2014 SMD2"),
    ]
    for n, s in ((5, 40), (20, 20)):
        val, pt = newsvendor_optimum(n, s, seed=n)
        out.append(BenchProblem(f"newsvendor_{n}x{s}", "stochastic", newsvendor(n, s, seed=n), val, {"x": pt},
                                "SAA newsvendor (Shapiro et al. 2009 Sec. 1.2.1); optimum of the SAA by enumeration"))
    return out
