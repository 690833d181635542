"""mnl_assortment: our batched Newton MLE against scipy.optimize.minimize, in one run.

    python benchmarks/mnl_assortment/mle.py [--runs 48] [--rounds 2000] [--repeats 3]

The online stage refits the ridge MLE of every (method, radius, seed) run at once with a batched
Newton method (stages/mnl_assortment/mnl.py: newton_mle); the library answer is
scipy.optimize.minimize (trust-exact, the same analytic gradient and Hessian) run once per run.
On simulated linear-MNL data of the study's shape (d = 5, K = 4, some assortments of 3) this prints
both times (best of --repeats, cold start from theta = 0), the ratio scipy / ours and the largest
|theta difference|.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): 2 runs x 50 rounds, one repeat.
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
    ap.add_argument("--runs", type=int, default=48, help="independent data sets (runs)")
    ap.add_argument("--rounds", type=int, default=2000, help="logged rounds per run")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.runs, a.rounds, a.repeats = 2, 50, 1
        print("smoke: tiny sizes, the figures mean nothing")
    import numpy as np

    from stages.common.device import limit_threads
    from stages.mnl_assortment.env import unit_ball, unit_sphere
    from stages.mnl_assortment.mnl import utilities, newton_mle, sample_choices, scipy_mle

    limit_threads()
    rng = np.random.default_rng(0)
    d, K, lam = 5, 4, 1.0
    X = unit_ball(rng, (a.runs, a.rounds, K), d)
    mask = np.ones((a.runs, a.rounds, K), dtype=bool)
    mask[..., -1] = rng.uniform(size=(a.runs, a.rounds)) < 0.7
    theta = 2.0 * unit_sphere(rng, a.runs, d)
    y = sample_choices(utilities(X, theta), mask, rng.uniform(size=(a.runs, a.rounds)))
    t_ours, (ours, iters, gnorm) = best_of(lambda: newton_mle(X, mask, y, lam, tol=1e-8), a.repeats)
    t_lib, lib = best_of(lambda: np.array([scipy_mle(X[k], mask[k], y[k], lam).x for k in range(a.runs)]),
                         a.repeats)
    print(f"{a.runs} runs x {a.rounds} rounds, d={d}, K={K}; best of {a.repeats}")
    print(f"  batched Newton (ours): {t_ours * 1e3:9.1f} ms ({iters} iterations, max |grad| {gnorm:.1e})")
    print(f"  scipy.optimize.minimize trust-exact, one call per run: {t_lib * 1e3:9.1f} ms")
    print(f"  ratio scipy / ours = {t_lib / t_ours:.1f}x; max |theta_ours - theta_scipy| = "
          f"{np.max(np.abs(ours - lib)):.1e}")


if __name__ == "__main__":
    main()
