"""The formulation generator: every script builds its model; LaTeX and Pyomo describe the same
model (objectives and constraints agree at random points); known optima equal an exhaustive
search (planted integer problems) and HiGHS's answer equals one (integer LPs)."""
from __future__ import annotations

import itertools
import math
import random

import pytest

from stages.autoopt.data import grammar as g
from stages.autoopt.tokenizer import canonical

from .conftest import GEN

SEEDS = range(150)


@pytest.fixture(scope="module")
def problems():
    return [g.generate(s, **GEN) for s in SEEDS]


def test_covers_types_and_complexities(problems):
    assert {p.ptype for p in problems} == set(g.TYPES)
    assert {c for p in problems for c in p.complexities} == set(g.COMPLEXITIES)
    assert max(p.n for p in problems) == 100
    assert {p.meta["family"] for p in problems} == {"lp", "planted", "free"}


def test_latex_is_canonical_and_deterministic(problems):
    for s, p in zip(SEEDS, problems):
        assert canonical(p.latex()) == p.latex()
        assert g.generate(s, **GEN).latex() == p.latex() and g.generate(s, **GEN).pyomo() == p.pyomo()


def test_every_script_builds_and_agrees_with_the_tree(problems):
    import pyomo.environ as pe

    for s, p in zip(SEEDS, problems):
        m = g.build_model(p.pyomo())
        assert isinstance(m, pe.ConcreteModel)
        n_obj = len(list(m.component_data_objects(pe.Objective, descend_into=True)))
        assert n_obj == len(p.objectives) + (p.ptype == "bilevel")
        rng = random.Random(s)
        for _ in range(4):
            env = g.random_point(p, rng)
            (po, pc), (to, tc) = g.pyomo_values(m, env), g.tree_values(p, env)
            assert len(po) == len(to) and len(pc) == len(tc)
            for a, b in zip(po + pc, to + tc):
                assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9), (s, p.latex())


def test_a_changed_tree_is_caught():
    """The agreement check can fail: a script whose objective differs is detected."""
    p = next(p for p in (g.generate(s, **GEN) for s in SEEDS) if p.ptype == "single")
    bad = p.pyomo().replace("m.obj = Objective(expr=", "m.obj = Objective(expr=1 + ")
    env = g.random_point(p, random.Random(0))
    assert g.pyomo_values(g.build_model(bad), env)[0][0] == pytest.approx(g.tree_values(p, env)[0][0] + 1)


def _grid(p):
    names = list(p.dims)
    axes = [range(p.lo, p.hi + 1)] * sum(p.dims.values())
    for point in itertools.product(*axes):
        env, k = {}, 0
        for v in names:
            env[v] = {i + 1: float(point[k + i]) for i in range(p.dims[v])}
            k += p.dims[v]
        yield env


def _feasible(p, env):
    for c in p.constraints:
        r = c.residual(env)
        if (c.sense == "<=" and r > 1e-9) or (c.sense == ">=" and r < -1e-9) or (c.sense == "==" and abs(r) > 1e-9):
            return False
    return True


def _small_integer(family, want):
    out = []
    for s in range(5000):
        p = g.generate(s, **{**GEN, "complexity_rate": 0.5})
        if (p.integer and p.meta["family"] == family and p.ptype in ("single", "stochastic")
                and sum(p.dims.values()) <= 3 and (p.hi - p.lo + 1) ** sum(p.dims.values()) <= 6000):
            out.append(p)
        if len(out) == want:
            break
    assert len(out) == want
    return out


def test_planted_optimum_equals_exhaustive_search():
    for p in _small_integer("planted", 6):
        vals = [p.objectives[0].ev(env) for env in _grid(p) if _feasible(p, env)]
        best = min(vals) if p.sense == "min" else max(vals)
        assert best == pytest.approx(p.planted_value, abs=1e-9), p.latex()


def test_highs_optimum_equals_exhaustive_search():
    for p in _small_integer("lp", 6):
        vals = [p.objectives[0].ev(env) for env in _grid(p) if _feasible(p, env)]
        best = min(vals) if p.sense == "min" else max(vals)
        assert g.solve_linear(p.pyomo()) == pytest.approx(best, abs=1e-6), p.latex()


def test_continuous_lp_optimum_not_beaten_by_sampling():
    ps = [p for p in (g.generate(s, **GEN) for s in range(400))
          if p.meta["family"] == "lp" and not p.integer][:5]
    assert ps
    for p in ps:
        opt = g.solve_linear(p.pyomo())
        assert opt is not None
        rng = random.Random(1)
        for _ in range(300):
            env = g.random_point(p, rng)
            if _feasible(p, env):
                v = p.objectives[0].ev(env)
                assert (v >= opt - 1e-6) if p.sense == "min" else (v <= opt + 1e-6)
