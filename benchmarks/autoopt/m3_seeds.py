"""autoopt M3: the paired comparison pooled over several m3_runs.csv files.

Since the claims contract v2 the stage itself runs every verdict seed and judges the must over
them (reports/autoopt/m3_metrics.json, per_seed); this script stays for pooling runs of different
settings or checkouts, e.g. a BOBD variant (``--variant``) against the stage's runs.

Each default-profile run of ``autoopt-m3-evaluate`` writes one row per method x problem x run to
reports/autoopt/m3_runs.csv. Given the m3_runs.csv of runs with different ``common.seed`` (each
with its own seeds, so the files' runs are independent), this pools them: per complex problem,
BOBD's success rate over all runs minus the baseline's, their mean, and the class-stratified
bootstrap interval of m3/stats.py (the one the stage reports per seed); per file, the same
figures, and per class the success rates and BOBD - IPOPT with its (unstratified) interval.

    python benchmarks/autoopt/m3_seeds.py RUNS.csv [RUNS.csv ...] [--n-boot 10000] [--level 0.95]

``--smoke`` runs it at tiny sizes in seconds (what CI runs): no RUNS.csv needed, it writes two
stand-in files itself (m3-evaluate's ``run_problem`` at a tiny budget on two problems of each
complex class, seeds 0 and 1, in a temporary folder) and pools them.
"""
from __future__ import annotations

import argparse
import csv
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def per_problem(rows: list[dict]) -> dict[str, dict]:
    out: dict[str, dict] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        out[r["problem"]]["class"] = r["class"]
        out[r["problem"]][r["method"]].append(r["success"] == "True")
    return out


def smoke_runs(folder: Path) -> list[str]:
    """Two m3_runs.csv stand-ins in ``folder`` (seeds 0 and 1), written the way m3-evaluate writes
    them: its run_problem at a tiny budget on the first two problems of each complex class."""
    import warnings
    from types import SimpleNamespace

    from stages.autoopt.m3.evaluate import run_problem
    from stages.autoopt.m3.problems import COMPLEX_CLASSES, problems
    from stages.common.plots import write_csv

    warnings.filterwarnings("ignore", category=RuntimeWarning)      # as m3-evaluate does
    mp = SimpleNamespace(budget=20, high_dim_budget=20, bobd_pop=4, ga_pop=4, ipopt_max_iter=10, feas_tol=1e-6,
                         rel_tol=0.01, nonconvex_upper=True, upper_ea="ga")
    probs = [p for c in COMPLEX_CLASSES for p in [p for p in problems() if p.cls == c][:2]]
    paths = []
    for seed in (0, 1):
        paths.append(str(write_csv(folder / f"m3_runs_seed{seed}.csv",
                                   [row for p in probs for row in run_problem(p, seed, mp)])))
    print(f"smoke: no RUNS.csv read; {len(probs)} problems x 1 run, budget {mp.budget}, seeds 0 and 1, "
          f"written to a temporary folder (figures meaningless)")
    return paths


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="*")
    ap.add_argument("--n-boot", type=int, default=10000)
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--variant", nargs="*", default=[], help="m3_runs.csv files of a BOBD variant (same seeds): "
                    "its BOBD rows replace BOBD's, its own IPOPT rows are the baseline")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if not a.runs and not a.smoke:
        ap.error("the following arguments are required: runs")
    if a.smoke:
        tmp = tempfile.TemporaryDirectory(prefix="m3_seeds_smoke_")
        a.runs = smoke_runs(Path(tmp.name))
        a.variant, a.n_boot = a.runs[1:], 200
    from stages.autoopt.m3.problems import COMPLEX_CLASSES
    from stages.autoopt.m3.stats import paired_bootstrap, sign_counts

    def report(label: str, rows: list[dict]) -> None:
        pp = {k: v for k, v in per_problem(rows).items() if v["class"] in COMPLEX_CLASSES}
        names = sorted(pp)
        rate = {m: float(np.mean([x for n in names for x in pp[n][m]])) for m in ("bobd", "ipopt", "ga")}
        runs = {len(pp[n]["bobd"]) for n in names}
        print(f"{label}: {len(names)} complex problems, runs a problem {sorted(runs)}; success "
              + ", ".join(f"{m} {v:.3f}" for m, v in rate.items()))
        strata = [pp[n]["class"] for n in names]
        for k, base in enumerate(("ipopt", "ga")):     # bootstrap seeds 0 and 1, as the stage's at seed 0
            diff = [np.mean(pp[n]["bobd"]) - np.mean(pp[n][base]) for n in names]
            ci = paired_bootstrap(diff, strata, n_boot=a.n_boot, level=a.level, seed=k)
            sc = sign_counts(diff)
            print(f"  BOBD - {base:5s} {ci['mean']:+.3f}  {a.level:.0%} interval [{ci['low']:+.3f}, {ci['high']:+.3f}]"
                  f"  problems better / worse / tied {sc['better']} / {sc['worse']} / {sc['tied']}")
        for c in COMPLEX_CLASSES:
            ns = [n for n in names if pp[n]["class"] == c]
            d = [np.mean(pp[n]["bobd"]) - np.mean(pp[n]["ipopt"]) for n in ns]
            ci = paired_bootstrap(d, None, n_boot=a.n_boot, level=a.level, seed=0)
            print(f"    {c:18s} " + "  ".join(
                f"{m} {np.mean([x for n in ns for x in pp[n][m]]):.2f}" for m in ("bobd", "ipopt", "ga"))
                + f"   BOBD - IPOPT {ci['mean']:+.2f} [{ci['low']:+.2f}, {ci['high']:+.2f}]")

    pooled: list[dict] = []
    for path in a.runs:
        rows = list(csv.DictReader(open(path)))
        report(path, rows)
        pooled += rows
    if len(a.runs) > 1:
        report("pooled", pooled)
    if a.variant:
        var = [r for p in a.variant for r in csv.DictReader(open(p))]
        report("variant (its BOBD, its IPOPT and GA at its evaluations), pooled", var)


if __name__ == "__main__":
    main()
