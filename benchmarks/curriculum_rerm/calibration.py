"""curriculum_rerm calibration, on calibration seeds only (>= 1000, never a verdict seed): the
digits experiment's lambda, and whether each candidate control of the two musts passes.

The musts compare the good curriculum with direct training on the same target data (per seed:
the mean over the seed's replications of good - direct; ridge: each arm at its own best lambda
of the sweep; digits: test error). A control is the same difference for an arm without the
paper's contribution, judged by the same rule (the t-interval of the per-seed mean,
stages/common/inference.judge) and threshold (0). Candidates: the violating curriculum (early
optima unrelated to the target: the paper's condition taken out), the reversed curriculum (the
same tasks in reverse order: a larger r) and the pooled arm (the curriculum's data in one task,
uniform weights: the curriculum taken out, its data kept).

    nice -n 19 python -m benchmarks.curriculum_rerm.calibration [--seeds 1000,...] [--lams 0.001,0.01]

Prints: ridge and SGD (the default profile's sizes) per arm, the must and every candidate control
with per-seed values, mean, 90% interval and verdict; then the digits arms at every lambda of
``--lams`` (every arm with the same grid: the same tuning budget), each arm's best lambda, and
at each lambda the must and the candidate controls. The verdict seeds are not touched.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds, two lambdas.
"""
from __future__ import annotations

import time
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402

CANDIDATES = ("violating", "reversed", "pooled")


def main() -> None:
    ap = seed_parser(__doc__)
    ap.add_argument("--lams", default="0.001,0.003,0.01,0.03,0.1", help="digits lambdas (every arm)")
    a, seeds = parse_seeds(ap, lams="0.001,0.03")
    lams = [float(x) for x in a.lams.split(",")]

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.common.runtime.params import load_study
    from stages.curriculum_rerm.evaluate import ridge_metrics, sgd_metrics
    from stages.curriculum_rerm.params import PARAMS
    from stages.curriculum_rerm.train import lambda_grid, run_digits, run_ridge

    limit_threads()
    _, p = load_study("curriculum_rerm", PARAMS, profile=a.profile)
    tp = p.train

    def show(label: str, values: list[float], fmt: str = "+.2f") -> str:
        j = judge(values, "<", 0.0, "interval")
        lo, hi = j.interval if j.interval else (float("nan"), float("nan"))
        return (f"  {label:34s} per seed [{', '.join(format(v, fmt) for v in values)}] mean {j.mean:{fmt}} "
                f"90% interval [{lo:{fmt}}, {hi:{fmt}}] -> {j.verdict}")

    t0 = time.process_time()
    ridge = run_ridge(tp.ridge, tp.sgd, seeds)
    for s in seeds:
        ridge[s]["ridge.lambdas"] = lambda_grid(tp.ridge.lambdas)
    rm = {s: ridge_metrics(ridge[s]) for s in seeds}
    sm = {s: sgd_metrics(ridge[s]) for s in seeds}
    print(f"profile {a.profile}, calibration seeds {seeds}; ridge d = {tp.ridge.dim}, {tp.ridge.n_tasks} tasks of "
          f"{tp.ridge.n_per_task}, {tp.ridge.replications} replications a seed ({time.process_time() - t0:.1f} CPU s)")
    arms = list(rm[seeds[0]]["best"])
    print("  ridge, mean excess risk at each arm's best lambda (mean over seeds): " + ", ".join(
        f"{k} {np.mean([rm[s]['best'][k] for s in seeds]):.1f} (lambda {rm[seeds[0]]['best_lambda'][k]:g})"
        for k in arms))
    print("  r (largest step between successive optima, w*_0 = 0; direct's is ||w*|| = "
          f"{tp.ridge.w_norm:g}): good {np.mean([rm[s]['r']['good_max'] for s in seeds]):.2f}, reversed "
          f"{np.mean([rm[s]['r']['reversed_max'] for s in seeds]):.2f}, violating (mean) "
          f"{np.mean([rm[s]['r']['violating_mean'] for s in seeds]):.2f}")
    diff = {k: [rm[s]["best"][k] - rm[s]["best"]["direct"] for s in seeds] for k in arms}
    print(show("must    good - direct", diff["good"]))
    for c in CANDIDATES:
        print(show(f"control {c} - direct", diff[c]))
    print(show("good - pooled", [rm[s]["best"]["good"] - rm[s]["best"]["pooled"] for s in seeds]))
    print(show("good - reversed", [rm[s]["best"]["good"] - rm[s]["best"]["reversed"] for s in seeds]))
    print(f"  equal total data, good / direct_total: "
          f"{[round(rm[s]['total_data']['good_over_direct_total'], 2) for s in seeds]}")
    print(f"SGD at lambda {tp.sgd.lam:g}: mean " + ", ".join(
        f"{k} {np.mean([sm[s]['mean'][k] for s in seeds]):.1f}" for k in sm[seeds[0]]["mean"]))
    print(show("SGD good - direct", [sm[s]["mean"]["good"] - sm[s]["mean"]["direct"] for s in seeds]))
    print(show("SGD control violating - direct", [sm[s]["mean"]["violating"] - sm[s]["mean"]["direct"] for s in seeds]))

    d = tp.digits
    print(f"\ndigits: {d.replications} replications a seed, {d.per_stage} images a stage, {d.steps} steps, lr {d.lr:g}; "
          f"every arm at each lambda")
    err = {}                                                # lam -> arm -> [per-seed mean error]
    for lam in lams:
        res = run_digits(d.model_copy(update={"lam": lam}), seeds)
        arms_d = [k.split(".", 1)[1] for k in res[seeds[0]]]
        err[lam] = {k: [float(res[s][f"digits.{k}"].mean()) for s in seeds] for k in arms_d}
        print(f"  lambda {lam:g}: mean error " + ", ".join(f"{k} {np.mean(v):.4f}" for k, v in err[lam].items())
              + f"  ({time.process_time() - t0:.0f} CPU s so far)", flush=True)
    arms_d = list(err[lams[0]])
    best = {k: min(lams, key=lambda lam: np.mean(err[lam][k])) for k in arms_d}
    print("  each arm's best lambda: " + ", ".join(f"{k} {best[k]:g} ({np.mean(err[best[k]][k]):.4f})" for k in arms_d))
    for lam in lams:
        e = err[lam]
        print(f" lambda {lam:g}:")
        print(show("must    good - direct", [g - b for g, b in zip(e["good"], e["direct"])], "+.4f"))
        for c in CANDIDATES:
            print(show(f"control {c} - direct", [g - b for g, b in zip(e[c], e["direct"])], "+.4f"))
        print(show("good - pooled", [g - b for g, b in zip(e["good"], e["pooled"])], "+.4f"))
        print(show("good - reversed", [g - b for g, b in zip(e["good"], e["reversed"])], "+.4f"))
    print(f"total {time.process_time() - t0:.0f} CPU s")


if __name__ == "__main__":
    main()
