"""ensemble_tail calibration, on calibration seeds only (>= 1000, never a verdict seed): the
subsample fraction of the tuned bagging-average (the musts' control) and the replications a seed.

The musts compare MoVE with the base learner on the stochastic LP (its upper tail bound at
n = compare_n over the base's rate <= 1/5; its log-linear tail slope >= 10x the base's). Their
control is the variance-reduction ensemble the abstract argues against, the bagging-average, with
its subsample size tuned for averaging (k = round(fraction x n), at least MoVE's k): the same
subsample-and-aggregate scheme with the mode (the paper's contribution) replaced by the mean.
The fraction is chosen as the one with the smallest mean tail rate at n = compare_n over the
calibration seeds (the best bagging can do on the must's own figure), from a grid at least as
wide as anything MoVE was tuned on (MoVE's k = 10 and B = 200 are STUDIES.md's, untuned).

    nice -n 10 python -m benchmarks.ensemble_tail.calibration [--seeds 1000,...] [--fractions 0.1,0.25]
        [--replications 2000]

Prints per seed and fraction the must's and the control's figures, their means and t-intervals
over the seeds and verdicts (stages.common.inference.judge, the ledger's rule), the CPU seconds a
seed, then the chosen fraction. The LP only (the regression is a should row).
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import time
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402


def main() -> None:
    ap = seed_parser(__doc__)
    ap.add_argument("--fractions", default="0.1,0.25,0.5,0.75")
    ap.add_argument("--replications", type=int, default=0, help="replications a seed (0: the profile's)")
    a, seeds = parse_seeds(ap, fractions="0.25,0.5")
    fracs = [float(f) for f in a.fractions.split(",")]

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.common.runtime.params import load_study
    from stages.ensemble_tail import problems as P
    from stages.ensemble_tail.evaluate import analyse
    from stages.ensemble_tail.params import PARAMS
    from stages.ensemble_tail.train import sweep

    limit_threads(1)
    _, p = load_study("ensemble_tail", PARAMS, profile=a.profile)
    tp, ep = p.train, p.evaluate
    R = a.replications or tp.replications
    cvec = np.asarray(tp.lp.costs, float)
    bags = {f"bag{f:g}": f for f in fracs}
    print(f"profile {a.profile}: LP n = {tp.n_grid}, {R} replications a seed, seeds {seeds}; tuned bagging "
          f"B = {tp.ensembles.bag_B}, fractions {fracs}", flush=True)
    figs: dict[str, dict[str, list[float]]] = {}
    rates: dict[str, list[float]] = {}
    for s in seeds:
        c0 = time.process_time()
        res = sweep("lp", lambda rng, r, n: P.lp_costs(rng, cvec, tp.lp.tail_index, r, n),
                    P.true_excess("lp", c=cvec), tp.n_grid, R, tp.chunk, tp.ensembles, tp.lp.threshold, s,
                    bags=bags)
        m = analyse(res, ep, np.random.default_rng([s, 7]), intervals=False)
        i = tp.n_grid.index(ep.compare_n)
        for arm in ["move", *bags]:
            f = figs.setdefault(arm, {"ratio": [], "slope": []})
            f["ratio"].append(m[arm]["upper_over_base_at_compare_n"])
            f["slope"].append(m[arm].get("slope_ratio", float("nan")))
            rates.setdefault(arm, []).append(m[arm]["rate"][i])
        rates.setdefault("base", []).append(m["base"]["rate"][i])
        print(f"  seed {s} ({time.process_time() - c0:.1f} CPU s): base rate at n={ep.compare_n} "
              f"{m['base']['rate'][i]:.4f}; MoVE fit on n = {m['move']['fit_n']}; " + "; ".join(
                  f"{arm} upper/base {figs[arm]['ratio'][-1]:.3f} slope ratio {figs[arm]['slope'][-1]:.2f}"
                  for arm in figs), flush=True)
    print("over the seeds (t-interval, the ledger's rule):")
    for arm, f in figs.items():
        jr = judge(f["ratio"], "<=", 0.2, "interval")
        js = judge(f["slope"], ">=", 10, "interval")
        print(f"  {arm:8s} rate at n={ep.compare_n} {np.mean(rates[arm]):.4f}; upper/base <= 0.2: mean {jr.mean:.3f} "
              f"{[round(x, 3) for x in jr.interval] if jr.interval else None} {jr.verdict}; slope ratio >= 10: "
              f"mean {js.mean:.2f} {[round(x, 2) for x in js.interval] if js.interval else None} {js.verdict}")
    best = min(bags, key=lambda b: np.mean(rates[b]))
    print(f"base rate at n={ep.compare_n}: {np.mean(rates['base']):.4f}; chosen (smallest mean tail rate of the "
          f"tuned bagging at n = {ep.compare_n}): fraction {bags[best]:g}")


if __name__ == "__main__":
    main()
