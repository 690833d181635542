"""linear_cmdp: the exact optimum by the HiGHS occupancy LP against the official Lagrangian method.

    python benchmarks/linear_cmdp/optimum.py [--instances 2] [--iterations 50000] [--repeats 5]
    python benchmarks/linear_cmdp/optimum.py --smoke   # tiny sizes in seconds (what CI runs)

The official repository computes the regret reference V* with ``compute_optimal_rew_util``:
50 000 subgradient steps on the Lagrange multiplier, each solving the unconstrained MDP of
r + lambda u by backward induction, averaging the occupancy measures (our numpy port:
stages.linear_cmdp.cmdp.lagrange_optimum). The study solves the occupancy-measure LP with
HiGHS instead (scipy.optimize.linprog(method="highs")). On binding instances of the study's two
generators this prints, per instance, both times, the ratio Lagrange / LP, and how far the
Lagrangian average is from the LP's V* and from the threshold. ``--smoke`` runs it at tiny sizes
in seconds (what CI runs): one instance per setup, 200 Lagrangian steps, one LP timing.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmarks.bench import best_of  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=2, help="binding instances per setup")
    ap.add_argument("--iterations", type=int, default=50_000, help="Lagrangian steps (official: 50000)")
    ap.add_argument("--repeats", type=int, default=5, help="LP timing: best of this many")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.instances, a.iterations, a.repeats = 1, 200, 1
        print("smoke: tiny sizes, the figures mean nothing")
    import time

    import numpy as np

    from stages.linear_cmdp.cmdp import (binding_gap, lagrange_optimum, linear_cmdp, solve_occupancy_lp,
                                         tabular_cmdp, with_threshold)

    ratios = []
    print(f"HiGHS occupancy LP (best of {a.repeats}) vs official Lagrangian method ({a.iterations} steps)")
    for kind, scale in (("tabular", 0.6), ("linear", 0.9)):
        found, seed = 0, 0
        while found < a.instances:
            rng = np.random.default_rng(seed)
            seed += 1
            m = tabular_cmdp(rng, 5, 3, 4) if kind == "tabular" else linear_cmdp(rng, 5, 3, 4, 2)
            m = with_threshold(m, scale)
            free, v_star, _ = binding_gap(m)
            if free - v_star <= 1e-6:
                continue
            found += 1
            t_lp, sol = best_of(lambda: solve_occupancy_lp(m.P, m.r, m.mu, m.u, m.threshold), a.repeats)
            t0 = time.perf_counter()
            r_avg, u_avg = lagrange_optimum(m, iterations=a.iterations)
            t_lag = time.perf_counter() - t0
            ratios.append(t_lag / t_lp)
            print(f"{kind:7s} seed {seed - 1:3d}: LP {t_lp * 1e3:7.2f} ms, Lagrange {t_lag:7.2f} s; "
                  f"Lagrange / LP = {t_lag / t_lp:8.0f}x; V*_LP = {sol.value:.6f}, "
                  f"V_Lagrange - V*_LP = {r_avg - sol.value:+.2e}, V_u,Lagrange - b = {u_avg - m.threshold:+.2e}")
    print(f"median ratio Lagrange / LP = {float(np.median(ratios)):.0f}x")


if __name__ == "__main__":
    main()
