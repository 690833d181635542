"""autoopt M3: the paired comparison pooled over several seeds' runs (issue 20).

Each default-profile run of ``autoopt-m3-evaluate`` writes one row per method x problem x run to
reports/autoopt/m3_runs.csv. Given the m3_runs.csv of runs with different ``common.seed`` (each
with its own seeds, so the files' runs are independent), this pools them: per complex problem,
BOBD's success rate over all runs minus the baseline's, their mean, and the class-stratified
bootstrap interval of m3/stats.py (the one the stage reports per seed); per file, the same
figures, and per class the success rates and BOBD - IPOPT with its (unstratified) interval.

    python benchmarks/autoopt_m3_seeds.py RUNS.csv [RUNS.csv ...] [--n-boot 10000] [--level 0.95]
"""
from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def per_problem(rows: list[dict]) -> dict[str, dict]:
    out: dict[str, dict] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        out[r["problem"]]["class"] = r["class"]
        out[r["problem"]][r["method"]].append(r["success"] == "True")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--n-boot", type=int, default=10000)
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--variant", nargs="*", default=[], help="m3_runs.csv files of a BOBD variant (same seeds): "
                    "its BOBD rows replace BOBD's, its own IPOPT rows are the baseline")
    a = ap.parse_args()
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
