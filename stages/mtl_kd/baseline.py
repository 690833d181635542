"""The reference: PyVRP's hybrid genetic search (HGS, pyvrp 0.14.1), run for real with a fixed
iteration limit. PyVRP works on integers, so distances, durations and time windows are the
float values times SCALE, rounded; its routes are then costed in floats by
:func:`stages.mtl_kd.vrp.route_cost`, the same function that costs the neural solutions."""
from __future__ import annotations

import numpy as np

from .vrp import HORIZON, SERVICE

SCALE = 10_000


def build_model(inst: dict, i: int):
    """The PyVRP model of instance ``i``: an open route's legs back to the depot cost nothing and
    take no time."""
    from pyvrp import Model

    xy, dem, win = inst["xy"][i], inst["demand"][i], inst["window"][i]
    n = len(dem) - 1
    open_, tw = bool(inst["open"][i]), bool(inst["tw"][i])
    ixy = np.round(xy * SCALE).astype(np.int64)
    m = Model()
    locs = [m.add_location(int(x), int(y)) for x, y in ixy]
    depot = m.add_depot(locs[0], tw_early=0, tw_late=int(round(HORIZON * SCALE)))
    m.add_vehicle_type(num_available=n, capacity=int(inst["capacity"][i]), start_depot=depot, end_depot=depot,
                       tw_early=0, tw_late=int(round(HORIZON * SCALE)))
    for c in range(1, n + 1):
        kw = {}
        if tw:
            kw = {"tw_early": int(round(win[c, 0] * SCALE)), "tw_late": int(round(win[c, 1] * SCALE)),
                  "service_duration": int(round(SERVICE * SCALE))}
        m.add_client(locs[c], delivery=int(dem[c]), **kw)
    dist = np.round(np.linalg.norm(xy[:, None] - xy[None], axis=-1) * SCALE).astype(np.int64)
    for a in range(n + 1):
        for b in range(n + 1):
            if a != b:
                d = 0 if (open_ and b == 0) else int(dist[a, b])
                m.add_edge(locs[a], locs[b], distance=d, duration=d)
    return m


def solve(inst: dict, i: int, iterations: int, seed: int = 0) -> tuple[list[list[int]], int, bool]:
    """HGS on instance ``i``: (routes as customer indices 1..n, PyVRP's integer cost, feasible)."""
    from pyvrp.stop import MaxIterations

    res = build_model(inst, i).solve(MaxIterations(iterations), seed=seed, display=False, collect_stats=False)
    best = res.best
    routes = [[int(a.idx) + 1 for a in r if a.is_client()] for r in best.routes()]
    return routes, int(best.distance_cost()), bool(best.is_feasible())


def pyvrp_cost_of(inst: dict, i: int, routes: list[list[int]]) -> int:
    """PyVRP's own integer distance of ``routes`` (for the test against vrp.route_cost)."""
    from pyvrp import Route, Solution

    data = build_model(inst, i).data()
    sol = Solution(data, [Route(data, [c - 1 for c in r], 0) for r in routes])      # clients are 0-based there
    return int(sol.distance_cost())
