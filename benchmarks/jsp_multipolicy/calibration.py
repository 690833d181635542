"""Calibration of jsp_multipolicy: training steps/s, and the must checks at a candidate default
size (train 6x6, test 10x10 vs CP-SAT best-known with a short time limit), for single policy
(SLIM), multi-policy (K = 4, adaptive intensity) and the uniform-intensity ablation.

    PYTHONPATH=. nice -n 19 python benchmarks/jsp_multipolicy_calibration.py [steps] [n_test] [variants]

variants: comma-separated name:K:tau (default single:1:1,multi:4:0.02,multi_uniform:4:inf); the
first is the reference of the paired differences.
"""
import sys
import time

import numpy as np


def main():
    import torch

    from stages.common.isolated import map_isolated
    from stages.common.stats import t_interval
    from stages.jsp_multipolicy.jsp import RULES, cpsat_solve, random_instances, rule_makespans
    from stages.jsp_multipolicy.policy import best_of, train_policy

    torch.set_num_threads(1)
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    n_test = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    rng = np.random.default_rng(123)
    M, D = random_instances(n_test, 10, 10, rng)
    t = time.time()
    cp = map_isolated(cpsat_solve, [(M[i].tolist(), D[i].tolist(), 1.0) for i in range(n_test)], 2)
    ref = np.array([c["makespan"] for c in cp])
    print(f"CP-SAT 10x10, 1 s limit: {time.time() - t:.1f} s wall, optimal {sum(c['optimal'] for c in cp)}/{n_test}")
    for r in RULES:
        print(f"  {r}: gap {100 * np.mean(rule_makespans(M, D, r) / ref - 1):.2f}%")
    gaps = {}
    spec = sys.argv[3] if len(sys.argv) > 3 else "single:1:1,multi:4:0.02,multi_uniform:4:inf"
    variants = [(v.split(":")[0], int(v.split(":")[1]), float(v.split(":")[2])) for v in spec.split(",")]
    for name, K, tau in variants:
        t = time.process_time()
        net, hist = train_policy(K, steps=steps, instances=16, samples=32, n_jobs=6, n_machines=6, kind="jssp",
                                 hidden=64, lr=1e-3, tau=tau, seed=0)
        tt = time.process_time() - t
        best, _ = best_of(net, M, D, 32, seed=7)
        gaps[name] = 100 * (best / ref - 1)
        print(f"{name}: train {tt:.1f} s CPU ({steps / tt:.1f} steps/s), eval {time.process_time() - t - tt:.1f} s; "
              f"gap {gaps[name].mean():.2f}%  (first/last train best {hist[0]['best_makespan']:.0f}/"
              f"{hist[-1]['best_makespan']:.0f})", flush=True)
    for a, b in [(v[0], variants[0][0]) for v in variants[1:]]:
        ci = t_interval(gaps[a] - gaps[b], 0.95)
        print(f"{a} - {b}: {ci['mean']:.2f} [{ci['low']:.2f}, {ci['high']:.2f}]")


if __name__ == "__main__":
    main()
