"""The exact optimum of a QoSD instance with HiGHS (highspy): the standard shortest-path
interdiction model with node potentials.

Variables: ``delta_e in [0, T]`` per edge, a potential ``pi_v in [0, T]`` per node with
``pi_s = 0`` and ``pi_t = T``; for every edge (u, v) both ``pi_v - pi_u <= w_e + delta_e`` and
``pi_u - pi_v <= w_e + delta_e``. Any feasible potential is a lower bound on the distances from s
(so d(s, t) >= pi_t = T), and ``pi_v = min(d(s, v), T)`` is feasible for every feasible delta: the
model is exact, with no path enumeration. (No edge needs a raise above T, and potentials capped at
T stay feasible, so the bounds cut nothing off.)

Costs, all without approximation:
- ``linear``: an LP.
- ``quadratic``: a convex QP (HiGHS's QP solver, Hessian ``diag(2 b)``).
- ``fixed_charge``: a MILP with one binary ``y_e`` per edge, ``delta_e <= T y_e``, cost
  ``f_e y_e + a_e delta_e`` (big-M = T is valid since no optimal raise exceeds T).

The solver's tolerances (integrality 1e-6, feasibility 1e-7) can leave a raise of ~1e-6 on an
edge whose y_e is 0, which the exact fixed-charge cost would charge in full: :func:`polish` zeroes
those and tops up any shortfall that leaves (~1e-6) greedily, so ``cost`` is the true cost of a
solution that passes the Dijkstra check; ``objective`` is HiGHS's own value.
"""
from __future__ import annotations

import numpy as np

from .qosd import Instance


def solve_exact(inst: Instance, time_limit: float = 30.0, mip_rel_gap: float = 1e-6) -> dict:
    """``{"status", "optimal", "cost", "delta", "bound", "seconds"}`` for ``inst``.
    ``optimal`` is False when HiGHS stopped at the time limit (then ``cost`` is its incumbent, or
    None, and ``bound`` its lower bound)."""
    import time

    import highspy

    m, n, T = inst.m, inst.n, float(inst.T)
    fixed = inst.kind == "fixed_charge"
    n_col = m + n + (m if fixed else 0)                  # delta | pi | y
    inf = highspy.kHighsInf
    cost = np.zeros(n_col)
    lower, upper = np.zeros(n_col), np.full(n_col, T)
    lower[m + inst.s] = upper[m + inst.s] = 0.0
    lower[m + inst.t] = upper[m + inst.t] = T
    cost[:m] = inst.a
    if fixed:
        cost[m + n:] = inst.f
        upper[m + n:] = 1.0
    rows_i, rows_j, rows_v, row_lo, row_up = [], [], [], [], []
    r = 0
    for e, (u, v) in enumerate(inst.edges.tolist()):
        for tail, head in ((u, v), (v, u)):                # pi_head - pi_tail - delta_e <= w_e
            rows_i += [r, r, r]
            rows_j += [m + head, m + tail, e]
            rows_v += [1.0, -1.0, -1.0]
            row_lo.append(-inf)
            row_up.append(float(inst.w[e]))
            r += 1
        if fixed:                                          # delta_e - T y_e <= 0
            rows_i += [r, r]
            rows_j += [e, m + n + e]
            rows_v += [1.0, -T]
            row_lo.append(-inf)
            row_up.append(0.0)
            r += 1
    from scipy.sparse import csc_matrix

    a = csc_matrix((rows_v, (rows_i, rows_j)), shape=(r, n_col))
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n_col, r
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, lower, upper
    lp.row_lower_, lp.row_upper_ = np.array(row_lo), np.array(row_up)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = a.indptr, a.indices, a.data
    if fixed:
        lp.integrality_ = [highspy.HighsVarType.kContinuous] * (m + n) + [highspy.HighsVarType.kInteger] * m
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("random_seed", 0)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", float(mip_rel_gap))
    h.passModel(lp)
    if inst.kind == "quadratic":                           # 1/2 x'Qx with Q = diag(2b) on delta
        h.passHessian(n_col, m, highspy.HessianFormat.kTriangular.value if hasattr(highspy.HessianFormat.kTriangular, "value") else 1,
                      np.arange(m + 1, dtype=np.int32).tolist() + [m] * (n_col - m),
                      np.arange(m, dtype=np.int32), 2.0 * inst.b)
    t0 = time.perf_counter()
    h.run()
    seconds = time.perf_counter() - t0
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    optimal = status == "Optimal"
    sol = np.array(h.getSolution().col_value) if info.primal_solution_status == 2 else None
    delta = None if sol is None else polish(inst, sol[:m], sol[m + n:] if fixed else None)
    bound = float(info.mip_dual_bound) if fixed else (float(info.objective_function_value) if optimal else None)
    return {"status": status, "optimal": optimal, "cost": None if delta is None else inst.cost(delta),
            "objective": float(info.objective_function_value) if sol is not None else None,
            "delta": delta, "bound": bound, "seconds": seconds}


def polish(inst: Instance, delta: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    """Clip to >= 0, zero raises below 1e-9 or whose binary is off, then raise the shortest path
    to T greedily if that left it short (by the solver's tolerance)."""
    from .qosd import greedy_pathperturb

    d = np.clip(np.asarray(delta, dtype=float), 0.0, None)
    d[d < 1e-9] = 0.0
    if y is not None:
        d[np.asarray(y) < 0.5] = 0.0
    return greedy_pathperturb(inst, d)
