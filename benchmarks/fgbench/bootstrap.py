"""fgbench: our vectorised percentile bootstrap against scipy.stats.bootstrap, in one run.

    python benchmarks/fgbench/bootstrap.py [--n 1000] [--resamples 2000] [--repeats 3] [--smoke]

``--smoke`` runs it at tiny sizes in seconds (what CI runs): 50 items, 50 resamples, one repeat.

The evaluate stage computes dozens of intervals (accuracy, MAE, RMSE, paired MAE differences)
with ``stages.fgbench.stats.bootstrap``; scipy.stats.bootstrap(method='percentile') does the
same. On the same data this prints both intervals (they agree to Monte-Carlo error) and the
time ratio scipy / ours, for the mean (an accuracy or MAE) and for a paired MAE difference.
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
    ap.add_argument("--n", type=int, default=1000, help="items (questions)")
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.n, a.resamples, a.repeats = 50, 50, 1
    import numpy as np
    from scipy import stats as sps

    from stages.fgbench import stats

    rng = np.random.default_rng(0)
    err_a = np.abs(rng.normal(1.0, 0.8, a.n))
    err_b = err_a * rng.uniform(0.7, 1.1, a.n)
    cases = {
        "mean (MAE / accuracy)": (
            lambda: stats.bootstrap([err_a], stats.mean_stat, a.resamples, 0.95, 1),
            lambda: sps.bootstrap((err_a,), np.mean, n_resamples=a.resamples, method="percentile",
                                  random_state=np.random.default_rng(1), vectorized=True).confidence_interval),
        "paired MAE difference": (
            lambda: stats.bootstrap([err_a, err_b], stats.diff_abs_stat, a.resamples, 0.95, 1),
            lambda: sps.bootstrap((err_a, err_b), lambda x, y, axis=-1: np.abs(x).mean(axis) - np.abs(y).mean(axis),
                                  paired=True, n_resamples=a.resamples, method="percentile",
                                  random_state=np.random.default_rng(1), vectorized=True).confidence_interval),
    }
    print(f"n = {a.n}, resamples = {a.resamples}, best of {a.repeats}")
    for name, (ours, ref) in cases.items():
        t_ours, ci = best_of(ours, a.repeats)
        t_ref, rci = best_of(ref, a.repeats)
        print(f"{name}: ours [{ci[0]:.4f}, {ci[1]:.4f}] in {t_ours * 1e3:.1f} ms; scipy "
              f"[{rci.low:.4f}, {rci.high:.4f}] in {t_ref * 1e3:.1f} ms; scipy / ours = {t_ref / t_ours:.2f}x")


if __name__ == "__main__":
    main()
