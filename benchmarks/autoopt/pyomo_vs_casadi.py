"""autoopt: a generated model's objective evaluated through our Pyomo -> casadi conversion
(stages.autoopt.m3.pyomo_casadi, batched with casadi's Function.map) against Pyomo's own ``value()``
at the same points. Prints both times, their ratio and the largest relative difference.

    python benchmarks/autoopt/pyomo_vs_casadi.py [--models 40] [--points 200]

``--smoke`` runs it at tiny sizes in seconds (what CI runs).
"""
from __future__ import annotations

import argparse
import random
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=40)
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.models, a.points = 2, 5
    import pyomo.environ as pe

    from stages.autoopt.data import grammar as G
    from stages.autoopt.m3.pyomo_casadi import build_casadi

    gen = {"type_weights": {"single": 0.5, "stochastic": 0.5}, "complexity_rate": 0.5,
           "n_choices": [10, 20, 50, 100]}
    t_ours = t_pyomo = 0.0
    worst = 0.0
    for seed in range(a.models):
        prob = G.generate(seed, **gen)
        m = G.build_model(prob.pyomo())
        cm = build_casadi(m)
        rng = random.Random(seed)
        envs = [G.random_point(prob, rng) for _ in range(a.points)]
        Z = np.array([[e[n.split("[")[0]][int(n.split("[")[1][:-1])] for n in cm.names] for e in envs])
        cm.function(a.points)                       # compile outside the timing, as the GA does
        t0 = time.perf_counter()
        f, _ = cm.evaluate(Z, np.zeros((a.points, 0)))
        t_ours += time.perf_counter() - t0
        obj = next(m.component_data_objects(pe.Objective, active=True))
        vars_ = [v for v in m.component_data_objects(pe.Var)]
        t0 = time.perf_counter()
        ref = []
        for z in Z:
            for v, val in zip(vars_, z):
                v.set_value(val, skip_validation=True)
            ref.append(pe.value(obj.expr))
        t_pyomo += time.perf_counter() - t0
        ref = np.array(ref)
        worst = max(worst, float(np.max(np.abs(cm.user_value(1) * f - ref) / np.maximum(1, np.abs(ref)))))
    print(f"{a.models} generated models x {a.points} points")
    print(f"casadi (ours, batched): {t_ours:.3f}s   pyomo value(): {t_pyomo:.3f}s   "
          f"ratio pyomo/ours: {t_pyomo / t_ours:.1f}x   largest relative difference: {worst:.2e}")


if __name__ == "__main__":
    main()
