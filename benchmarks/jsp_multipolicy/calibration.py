"""Calibration of jsp_multipolicy: training steps/s, and the must checks at a candidate default
size (train 6x6, test 10x10 vs CP-SAT best-known with a short time limit), for single policy
(SLIM), multi-policy (K = 4, adaptive intensity) and the uniform-intensity ablation.

    PYTHONPATH=. nice -n 19 python benchmarks/jsp_multipolicy/calibration.py [steps] [n_test] [variants]
    PYTHONPATH=. nice -n 19 python benchmarks/jsp_multipolicy/calibration.py --smoke

variants: comma-separated name:K:tau (default single:1:1,multi:4:0.02,multi_uniform:4:inf); the
first is the reference of the paired differences. ``--smoke`` runs it at tiny sizes in seconds
(what CI runs): 3 steps, 3 test shops, tiny nets and sample counts, CP-SAT limit 0.05.
"""
import argparse
import time

import numpy as np

VARIANTS = "single:1:1,multi:4:0.02,multi_uniform:4:inf"
# sizes: the calibration's, and --smoke's (the same code path, tiny)
SIZES = {"cpsat_limit": 1.0, "workers": 2, "instances": 16, "samples": 32, "hidden": 64, "eval_samples": 32}
SMOKE = {"steps": 3, "n_test": 3, "cpsat_limit": 0.05, "workers": 1, "instances": 2, "samples": 8, "hidden": 16,
         "eval_samples": 8}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("steps", nargs="?", type=int, default=150, help="training steps per variant")
    ap.add_argument("n_test", nargs="?", type=int, default=20, help="10x10 test shops")
    ap.add_argument("variants", nargs="?", default=VARIANTS, help="comma-separated name:K:tau")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    args = ap.parse_args()
    from stages.common.device import limit_threads
    from stages.common.isolated import map_isolated
    from stages.common.stats import t_interval
    from stages.jsp_multipolicy.jsp import RULES, cpsat_solve, random_instances, rule_makespans
    from stages.jsp_multipolicy.policy import best_of, train_policy

    limit_threads(1)
    sz = {**SIZES, "steps": args.steps, "n_test": args.n_test}
    if args.smoke:
        sz |= SMOKE
        print("smoke: tiny sizes, the figures mean nothing", flush=True)
    steps, n_test = sz["steps"], sz["n_test"]
    rng = np.random.default_rng(123)
    M, D = random_instances(n_test, 10, 10, rng)
    t = time.time()
    cp = map_isolated(cpsat_solve, [(M[i].tolist(), D[i].tolist(), sz["cpsat_limit"]) for i in range(n_test)],
                      sz["workers"])
    ref = np.array([c["makespan"] for c in cp])
    print(f"CP-SAT 10x10, {sz['cpsat_limit']:g} s limit: {time.time() - t:.1f} s wall, "
          f"optimal {sum(c['optimal'] for c in cp)}/{n_test}")
    for r in RULES:
        print(f"  {r}: gap {100 * np.mean(rule_makespans(M, D, r) / ref - 1):.2f}%")
    gaps = {}
    variants = [(v.split(":")[0], int(v.split(":")[1]), float(v.split(":")[2])) for v in args.variants.split(",")]
    for name, K, tau in variants:
        t = time.process_time()
        net, hist = train_policy(K, steps=steps, instances=sz["instances"], samples=sz["samples"], n_jobs=6,
                                 n_machines=6, kind="jssp", hidden=sz["hidden"], lr=1e-3, tau=tau, seed=0)
        tt = time.process_time() - t
        best, _ = best_of(net, M, D, sz["eval_samples"], seed=7)
        gaps[name] = 100 * (best / ref - 1)
        print(f"{name}: train {tt:.1f} s CPU ({steps / tt:.1f} steps/s), eval {time.process_time() - t - tt:.1f} s; "
              f"gap {gaps[name].mean():.2f}%  (first/last train best {hist[0]['best_makespan']:.0f}/"
              f"{hist[-1]['best_makespan']:.0f})", flush=True)
    for a, b in [(v[0], variants[0][0]) for v in variants[1:]]:
        ci = t_interval(gaps[a] - gaps[b], 0.95)
        print(f"{a} - {b}: {ci['mean']:.2f} [{ci['low']:.2f}, {ci['high']:.2f}]")


if __name__ == "__main__":
    main()
