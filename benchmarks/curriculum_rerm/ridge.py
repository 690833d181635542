"""curriculum_rerm: our batched closed-form biased ridge against scikit-learn's Ridge, one fit at a time.

    python benchmarks/curriculum_rerm/ridge.py [--replications 20] [--lambdas 9] [--repeats 3]

The study's ridge experiment solves biased RERM, w_t = argmin (1/2n)||X_t w - y_t||^2 +
(lambda/2)||w - w_(t-1)||^2, for every replication, every lambda of the sweep and every task of the good
curriculum, in one batched dual solve per task (stages.curriculum_rerm.rerm.run_sequence). The
library way: sklearn.linear_model.Ridge(alpha = n lambda, fit_intercept=False) fitted on the
residual targets y - X w_(t-1) and shifted by w_(t-1), one fit per (replication, lambda, task). Both run
here on the default profile's tasks (d = 100, 20 samples a task, 5 tasks); this prints both
times (best of --repeats), the ratio sklearn / ours and the largest difference of the solutions.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): 2 replications, 2 lambdas, 1 repeat.
The tasks are drawn with calibration seed 1000 (benchmarks never use a verdict seed).
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
    ap.add_argument("--replications", type=int, default=20)
    ap.add_argument("--lambdas", type=int, default=9, help="log-spaced over [1e-3, 10]")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:  # tiny sizes; options given explicitly still win
        ap.set_defaults(replications=2, lambdas=2, repeats=1)
        a = ap.parse_args()
    import numpy as np
    from sklearn.linear_model import Ridge

    from stages.common.device import limit_threads
    from stages.curriculum_rerm.rerm import make_tasks, run_sequence

    limit_threads()
    tasks = make_tasks(np.random.default_rng(1000), a.replications, 5, 20, 100, 10.0, 1.0, 0.5)
    X, y = tasks.X, tasks.labels("good")
    S, T, n, d = X.shape
    lams = np.geomspace(1e-3, 10, a.lambdas)

    def ours():
        return run_sequence(X, y, lams)

    def sklearn_loop():
        out = np.empty((S, len(lams), d))
        for s in range(S):
            for k, lam in enumerate(lams):
                w = np.zeros(d)
                for t in range(T):
                    fit = Ridge(alpha=n * lam, fit_intercept=False).fit(X[s, t], y[s, t] - X[s, t] @ w)
                    w = w + fit.coef_
                out[s, k] = w
        return out

    t_ours, w_ours = best_of(ours, a.repeats)
    t_sk, w_sk = best_of(sklearn_loop, a.repeats)
    fits = S * len(lams) * T
    print(f"{S} replications x {len(lams)} lambdas x {T} tasks = {fits} biased ridge fits (d = {d}, n = {n})")
    print(f"ours (batched dual solve): {t_ours * 1e3:8.2f} ms")
    print(f"sklearn Ridge, one by one: {t_sk * 1e3:8.2f} ms")
    print(f"ratio sklearn / ours = {t_sk / t_ours:.0f}x; max |w_ours - w_sklearn| = {np.abs(w_ours - w_sk).max():.2e}")


if __name__ == "__main__":
    main()
