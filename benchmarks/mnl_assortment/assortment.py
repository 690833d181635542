"""mnl_assortment: our enumeration of all assortments against HiGHS's LP, in one run.

    python benchmarks/mnl_assortment/assortment.py [--problems 500] [--items 10] [--capacity 4] [--repeats 3]

Every round the study needs the best of the sum_{k<=K} C(N, k) assortments (385 for N = 10,
K = 4), which it finds by enumeration in log space, vectorised over rounds and runs
(stages/mnl_assortment/mnl.py: log_revenue). The library answer is the Davis-Gallego-Topaloglu
LP solved by HiGHS (scipy.optimize.linprog, dual simplex; mnl.highs_assortment), one call per
problem. This prints both times on the same random problems (utilities in [-3, 3], revenues in
[0.5, 1]), the ratio HiGHS / enumeration and the largest |revenue difference|.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): 5 problems, N = 6, K = 2, one repeat.
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
    ap.add_argument("--problems", type=int, default=500)
    ap.add_argument("--items", type=int, default=10)
    ap.add_argument("--capacity", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.problems, a.items, a.capacity, a.repeats = 5, 6, 2, 1
        print("smoke: tiny sizes, the figures mean nothing")
    import numpy as np

    from stages.common.device import limit_threads
    from stages.mnl_assortment.mnl import enumerate_assortments, highs_assortment, log_revenue

    limit_threads()
    rng = np.random.default_rng(0)
    u = rng.uniform(-3, 3, (a.problems, a.items))
    r = rng.uniform(0.5, 1.0, (a.problems, a.items))
    A = enumerate_assortments(a.items, a.capacity)
    highs_assortment(u[0], r[0], a.capacity)                        # import scipy / HiGHS once

    def enumerate_all():
        return np.exp(np.max(log_revenue(u, r, A), axis=-1))

    t_enum, best = best_of(enumerate_all, a.repeats)
    t_lp, lp = best_of(lambda: np.array([highs_assortment(u[k], r[k], a.capacity)[0]
                                         for k in range(a.problems)]), a.repeats)
    print(f"{a.problems} problems, N={a.items}, K={a.capacity} ({len(A)} assortments); best of {a.repeats}")
    print(f"  enumeration (ours, vectorised): {t_enum * 1e3:9.1f} ms")
    print(f"  HiGHS LP (Davis-Gallego-Topaloglu), one call per problem: {t_lp * 1e3:9.1f} ms")
    print(f"  ratio HiGHS / enumeration = {t_lp / t_enum:.1f}x; max |revenue difference| = "
          f"{np.max(np.abs(best - lp)):.1e}")


if __name__ == "__main__":
    main()
