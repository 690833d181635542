"""hephaestus_qosd maths: the feasibility checker against networkx, the exact HiGHS model against
hand-solved and brute-force optima, and the heuristics' feasibility."""
from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from stages.hephaestus_qosd import milp, qosd


def two_paths(kind: str, T: float = 5.0, a=(1, 2, 3, 1), b=(1, 2, 1, 1), f=(1, 1, 1, 1)) -> qosd.Instance:
    """s=0 -a- 1 -a- 3=t (weights 1, 1) and 0 - 2 - 3 (weights 2, 2)."""
    return qosd.Instance("two", "hand", 4, [(0, 1), (1, 3), (0, 2), (2, 3)], [1, 1, 2, 2], 0, 3, T, kind, a, b, f)


def bridge(kind: str = "fixed_charge") -> qosd.Instance:
    """s=0 - 1 (a bridge, f=10), then 1 - 2 - 4 (weights 1, 1) and 1 - 3 - 4 (2, 2); T = 6."""
    return qosd.Instance("bridge", "hand", 5, [(0, 1), (1, 2), (2, 4), (1, 3), (3, 4)], [1, 1, 1, 2, 2], 0, 4, 6.0,
                         kind, [1] * 5, [1] * 5, [10, 2, 2, 2, 2])


def test_hand_optima():
    # linear: path 1 needs +3 on its a=1 edge, path 2 needs +1 on its a=1 edge
    assert milp.solve_exact(two_paths("linear"))["cost"] == pytest.approx(4.0, abs=1e-6)
    # quadratic with a = 0: split 3 over b = (1, 2) -> (2, 1): 4 + 2; split 1 over b = (1, 1): 0.25 + 0.25
    r = milp.solve_exact(two_paths("quadratic", a=(0, 0, 0, 0)))
    assert r["optimal"] and r["cost"] == pytest.approx(6.5, abs=1e-4)
    np.testing.assert_allclose(r["delta"], [2, 1, 0.5, 0.5], atol=1e-3)
    # fixed charge: raising both branches (2 + 3) + (2 + 1) = 8 beats the bridge 10 + 3 = 13
    r = milp.solve_exact(bridge())
    assert r["optimal"] and r["cost"] == pytest.approx(8.0, abs=1e-6)
    # the greedy baseline finds the same here, by hand: m-a raised by 3, then m-b by 1
    g = qosd.greedy_pathperturb(bridge())
    np.testing.assert_allclose(g, [0, 3, 0, 1, 0], atol=1e-9)


def brute_force(inst: qosd.Instance) -> float:
    """The optimum over all simple s-t paths: for fixed charge, every subset of raised edges with
    an LP (scipy linprog) each; for quadratic, SLSQP on the path constraints."""
    from scipy.optimize import linprog, minimize

    g = nx.Graph([tuple(e) for e in inst.edges.tolist()])
    paths = [[inst.edge_of[(u, v)] for u, v in zip(p, p[1:])] for p in nx.all_simple_paths(g, inst.s, inst.t)]
    A = np.zeros((len(paths), inst.m))
    for i, p in enumerate(paths):
        A[i, p] = 1.0
    need = inst.T - A @ inst.w
    if inst.kind == "quadratic":
        cons = [{"type": "ineq", "fun": lambda d: A @ d - need, "jac": lambda d: A}]
        res = minimize(lambda d: inst.cost(d), np.full(inst.m, inst.T / 2), jac=lambda d: inst.a + 2 * inst.b * d,
                       bounds=[(0, inst.T)] * inst.m, constraints=cons, method="SLSQP", options={"ftol": 1e-12, "maxiter": 500})
        return float(res.fun)
    best = np.inf
    for k in range(inst.m + 1):
        for sub in itertools.combinations(range(inst.m), k):
            ub = np.zeros(inst.m)
            ub[list(sub)] = inst.T
            res = linprog(inst.a, A_ub=-A, b_ub=-need, bounds=list(zip(np.zeros(inst.m), ub)), method="highs")
            if res.status == 0:
                best = min(best, res.fun + inst.f[list(sub)].sum())
    return float(best)


@pytest.mark.parametrize("kind", ["quadratic", "fixed_charge"])
def test_exact_model_matches_brute_force(kind):
    rng = np.random.default_rng(3)
    for i in range(3):
        g = nx.gnm_random_graph(5, 7, seed=i)
        while not nx.is_connected(g):
            g = nx.gnm_random_graph(5, 7, seed=i + 100)
        edges = sorted(g.edges)
        m = len(edges)
        inst = qosd.Instance(f"tiny{i}", "test", 5, edges, rng.uniform(1, 5, m), 0, 4, 1.0, kind,
                             rng.uniform(1, 3, m), rng.uniform(0.2, 1, m), rng.uniform(1, 6, m))
        inst.T = 1.6 * qosd.st_distance(inst, np.zeros(m))
        r = milp.solve_exact(inst)
        assert r["optimal"] and qosd.is_feasible(inst, r["delta"])
        assert r["cost"] == pytest.approx(brute_force(inst), rel=1e-4, abs=1e-5)


def test_feasibility_checker_matches_networkx():
    rng = np.random.default_rng(0)
    for fam in qosd.FAMILIES:
        inst = qosd.make_instance("x", fam, 14, 1.5, rng, "quadratic")
        g = nx.Graph()
        for _ in range(3):
            delta = rng.uniform(0, 3, inst.m) * (rng.random(inst.m) < 0.5)
            for e, (u, v) in enumerate(inst.edges.tolist()):
                g.add_edge(u, v, weight=inst.w[e] + delta[e])
            ref = nx.shortest_path_length(g, inst.s, inst.t, weight="weight")
            assert qosd.st_distance(inst, delta) == pytest.approx(ref, rel=1e-12)
            assert qosd.is_feasible(inst, delta) == (ref >= inst.T - 1e-6)
            d, path = qosd.shortest_path(inst, delta)
            assert sum(inst.w[e] + delta[e] for e in path) == pytest.approx(ref)


def test_heuristics_are_feasible_and_trim_never_costs_more():
    rng = np.random.default_rng(1)
    for fam in qosd.FAMILIES:
        base = qosd.make_instance("h", fam, 16, 1.5, rng)
        for kind in qosd.COSTS:
            inst = base.with_kind(kind)
            g = qosd.greedy_pathperturb(inst)
            f = qosd.forge(inst)
            t = qosd.trim(inst, g)
            assert qosd.is_feasible(inst, g) and qosd.is_feasible(inst, f) and qosd.is_feasible(inst, t)
            assert inst.cost(t) <= inst.cost(g) + 1e-9
            ls = qosd.local_search(inst, f, 3, rng)
            assert qosd.is_feasible(inst, ls) and inst.cost(ls) <= inst.cost(f) + 1e-9
            assert inst.cost(milp.solve_exact(inst)["delta"]) <= inst.cost(f) * (1 + 1e-6)


def test_costs_by_kind():
    inst = two_paths("fixed_charge", f=(5, 5, 5, 5))
    assert inst.cost(np.array([0, 2, 0, 0])) == pytest.approx(5 + 2 * 2)
    assert inst.raise_cost(1, 2.0, 1.0) == pytest.approx(2.0)          # already raised: no new charge
    q = two_paths("quadratic")
    assert q.cost(np.array([1, 0, 0, 2])) == pytest.approx(1 + 1 + 2 + 4)


@pytest.mark.parametrize("change, message", [
    ({"kind": "cubic"}, "is not one of"),
    ({"w": [1, -1, 2, 2]}, "base weights must be > 0"),
    ({"t": 0}, "must be distinct nodes"),
    ({"edges": [(0, 0), (1, 3), (0, 2), (2, 3)]}, "edges must join distinct nodes"),
    ({"a": [1, 2]}, "one value per edge"),
])
def test_bad_instances_are_refused(change, message):
    d = two_paths("linear").to_dict()
    d.update(change)
    with pytest.raises(ValueError, match=message):
        qosd.Instance.from_dict(d)


def test_instance_round_trips_and_unknown_family():
    inst = qosd.make_instance("r", "grid", 12, 1.5, np.random.default_rng(0), "fixed_charge")
    back = qosd.Instance.from_dict(inst.to_dict())
    assert back.T == inst.T and np.array_equal(back.edges, inst.edges) and back.kind == "fixed_charge"
    with pytest.raises(ValueError, match="unknown graph family"):
        qosd.make_graph("tree", 10, np.random.default_rng(0))
