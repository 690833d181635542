"""OR-Tools optima for the two problems, each call in a spawned worker (stages.common.isolated).

OR-Tools bundles a libhighs.so.1 that clashes with highspy's, so this module never imports it at
the top: the solve functions import it in their bodies and run through ``map_isolated``.
TSP: CP-SAT with ``AddCircuit`` on arc costs rounded to 1/1000 (proved optimal on those costs; the
float length of the returned tour is what we report). Knapsack: CP-SAT on the 0/1 model.
"""
from __future__ import annotations

from stages.common.isolated import map_isolated

SCALE = 1000


def solve_tsp_one(pts: list) -> tuple[list[int], str]:
    """A CP-SAT optimal tour of ``pts`` (list of (x, y)) and the solver status name."""
    import math

    from ortools.sat.python import cp_model

    n = len(pts)
    m = cp_model.CpModel()
    arcs, lits, cost = [], {}, []
    for i in range(n):
        for j in range(n):
            if i != j:
                lit = m.NewBoolVar(f"x{i}_{j}")
                lits[i, j] = lit
                arcs.append((i, j, lit))
                d = math.hypot(pts[i][0] - pts[j][0], pts[i][1] - pts[j][1])
                cost.append(int(round(d * SCALE)) * lit)
    m.AddCircuit(arcs)
    m.Minimize(sum(cost))
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.random_seed = 0
    s.parameters.max_time_in_seconds = 30.0
    status = s.Solve(m)
    tour, cur = [0], 0
    for _ in range(n - 1):
        cur = next(j for j in range(n) if j != cur and s.BooleanValue(lits[cur, j]))
        tour.append(cur)
    return tour, s.StatusName(status)


def solve_kp_one(args: tuple) -> tuple[list[int], int, str]:
    """A CP-SAT optimal item set of ``(items, cap)``, its value and the status name."""
    from ortools.sat.python import cp_model

    items, cap = args
    m = cp_model.CpModel()
    x = [m.NewBoolVar(f"x{i}") for i in range(len(items))]
    m.Add(sum(int(w) * xi for (w, _), xi in zip(items, x)) <= int(cap))
    m.Maximize(sum(int(v) * xi for (_, v), xi in zip(items, x)))
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.random_seed = 0
    status = s.Solve(m)
    chosen = [i for i, xi in enumerate(x) if s.BooleanValue(xi)]
    return chosen, int(round(s.ObjectiveValue())), s.StatusName(status)


def _tsp_batch(batch: list) -> list:
    return [solve_tsp_one(p) for p in batch]


def _kp_batch(batch: list) -> list:
    return [solve_kp_one(a) for a in batch]


def _chunks(xs: list, k: int) -> list[list]:
    size = max(1, -(-len(xs) // k))
    return [xs[i:i + size] for i in range(0, len(xs), size)]


def solve_all(problem: str, instances: list, workers: int = 2) -> list:
    """Solve every instance (TSP: list of points; KP: (items, cap)) in ``workers`` spawned
    processes, in chunks so each worker imports OR-Tools once. Every status must be OPTIMAL."""
    fn = {"tsp": _tsp_batch, "kp": _kp_batch}[problem]
    out = [r for chunk in map_isolated(fn, _chunks(instances, 4 * workers), workers) for r in chunk]
    bad = [r[-1] for r in out if r[-1] != "OPTIMAL"]
    if bad:
        raise RuntimeError(f"OR-Tools did not prove {len(bad)} {problem} instances optimal: {set(bad)}")
    return out
