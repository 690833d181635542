"""The reference baseline: OpenSpiel's CFR+ (the C++ ``pyspiel.CFRPlusSolver``), run for real.

CFR+'s guarantee is for its *average* policy; its current (last) iterate is recorded too,
for contrast with the last-iterate claim of the policy-gradient methods. Exploitability is
OpenSpiel's (``pyspiel.exploitability`` = NashConv / 2) at log-spaced iterations.
"""
from __future__ import annotations

import time

import numpy as np


def checkpoints(iterations: int, count: int) -> list[int]:
    """About ``count`` log-spaced iterations in [1, iterations], always including both ends."""
    marks = np.unique(np.round(np.geomspace(1, iterations, count)).astype(int))
    return sorted(set(marks.tolist()) | {1, iterations})


def cfr_plus(game, iterations: int, count: int) -> dict:
    """CFR+ for ``iterations``; exploitability of its average and current policies at the
    checkpoints; ``solve_s`` is the solver's time without the measurements."""
    import pyspiel

    solver = pyspiel.CFRPlusSolver(game)
    marks = set(checkpoints(iterations, count))
    out: dict = {"iters": [], "average": [], "current": [], "solve_s": 0.0}
    for it in range(1, iterations + 1):
        t0 = time.perf_counter()
        solver.evaluate_and_update_policy()
        out["solve_s"] += time.perf_counter() - t0
        if it in marks:
            out["iters"].append(it)
            out["average"].append(float(pyspiel.exploitability(game, solver.average_policy())))
            out["current"].append(float(pyspiel.exploitability(game, solver.current_policy())))
    return out
