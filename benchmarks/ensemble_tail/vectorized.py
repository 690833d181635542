"""ensemble_tail: the study's vectorized code against the library / official-style way, in one run.

    python benchmarks/ensemble_tail/vectorized.py [--reps 40] [--n 200] [--B 200] [--repeats 3] [--smoke]

``--smoke`` runs it at tiny sizes in seconds (what CI runs): 2 replications, n=30, B=10, one repeat.

1. Clopper-Pearson intervals: ``stages.ensemble_tail.tails.clopper_pearson`` (scipy.stats.beta.ppf
   on whole arrays) vs scipy.stats.binomtest(k, n).proportion_ci(method="exact") one count at a
   time, on every count of a default-size sweep (5 methods x 11 sizes); the largest difference.
2. MoVE on the LP: the study's vectorized pipeline (Floyd subsets for all replications and
   subsamples at once, gathered sums, argmin, mode) vs a loop written like the official
   VoteEnsemble code (rng.choice(n, k, replace=False) per subsample, SAA per subsample, a
   counting loop); both on ``--reps`` replications. Prints the time ratio loop / vectorized and
   the two tail rates (different random streams: equal in distribution, not draw for draw).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmarks.bench import best_of  # noqa: E402


def move_loop(X, rng, k, B):
    """Official-style MoVE, one replication and one subsample at a time."""
    import numpy as np

    out = []
    for x in X:
        sols = [int(x[rng.choice(len(x), k, replace=False)].sum(axis=0).argmin()) for _ in range(B)]
        counts: dict[int, int] = {}
        best, best_c = sols[0], 0
        for s in sols:
            counts[s] = counts.get(s, 0) + 1
            if counts[s] > best_c:
                best, best_c = s, counts[s]
        out.append(best)
    return np.asarray(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=40, help="replications for the MoVE comparison")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--B", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.reps, a.n, a.B, a.repeats = 2, 30, 10, 1
    import numpy as np
    from scipy.stats import binomtest

    from stages.ensemble_tail import ensemble as E
    from stages.ensemble_tail import problems as P
    from stages.ensemble_tail.tails import clopper_pearson

    rng = np.random.default_rng(0)
    ks = rng.integers(0, 2001, size=55)
    ks[:3] = (0, 1, 2000)
    clopper_pearson(ks, 2000)                                               # import scipy.stats once
    t_vec, (lo, hi) = best_of(lambda: clopper_pearson(ks, 2000, 0.95), a.repeats)

    def lib():
        cis = [binomtest(int(k), 2000).proportion_ci(confidence_level=0.95, method="exact") for k in ks]
        return np.array([c.low for c in cis]), np.array([c.high for c in cis])

    t_lib, (llo, lhi) = best_of(lib, a.repeats)
    diff = max(np.abs(lo - llo).max(), np.abs(hi - lhi).max())
    print(f"Clopper-Pearson, {ks.size} counts: scipy binomtest loop {t_lib * 1e3:.1f} ms, vectorized "
          f"{t_vec * 1e3:.2f} ms, ratio {t_lib / t_vec:.1f}x, largest difference {diff:.2e}")

    c = np.array([0.0, 0.6, 0.6, 1.2, 1.2])
    X = P.lp_costs(np.random.default_rng(1), c, 1.5, a.reps, a.n)
    t_v, mv = best_of(lambda: E.move(E.subsample_sums(X, np.random.default_rng(2), 10, a.B).argmin(axis=2), 5),
                      a.repeats)
    t_l, ml = best_of(lambda: move_loop(X, np.random.default_rng(2), 10, a.B), a.repeats)
    print(f"MoVE on the LP, {a.reps} replications x B={a.B} subsamples of 10, n={a.n}: official-style loop "
          f"{t_l:.2f} s, vectorized {t_v:.3f} s, ratio {t_l / t_v:.1f}x; wrong-vertex rate "
          f"loop {np.mean(ml != 0):.3f}, vectorized {np.mean(mv != 0):.3f}")


if __name__ == "__main__":
    main()
