"""autoopt M3 calibration, on calibration seeds only (>= 1000, never a verdict seed): the complex
set with the rebuilt high-dimensional class (few complicating + many smooth variables, issue 40:
problems.high_dim()) at its own budget, and non-convex variables at BOBD's upper level, judged as
the claims judge them (per-seed BOBD - IPOPT and BOBD - GA on the complex set, with their
controls GA - IPOPT and IPOPT - GA).

    nice -n 10 python benchmarks/autoopt/m3_calibration.py [--seeds 1000,1001,1002] [--classes high_dim] \
        [--nonconvex-upper false] [--high-dim-budget 3000]
    python benchmarks/autoopt/m3_calibration.py --smoke      # seconds: two small problems, one seed

Reads the default profile's m3 params (stages/autoopt/params.json); prints per seed and class the
success rates of BOBD, IPOPT multi-start and the GA, then the judged margins over the seeds and
the CPU seconds a seed. The verdict seeds are never touched.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="1000,1001,1002")
    ap.add_argument("--classes", default="", help="comma-separated classes (empty: the complex set)")
    ap.add_argument("--high-dim-budget", type=int, default=0, help="evaluations on the high-dimensional class "
                    "(0: the default profile's m3.high_dim_budget)")
    ap.add_argument("--nonconvex-upper", default="true", choices=["true", "false"])
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out", default="", help="write the rows as JSON here")
    a = ap.parse_args(argv)
    seeds = [int(s) for s in a.seeds.split(",")]
    if min(seeds) < 1000:
        raise SystemExit("calibration uses seeds >= 1000 only (the verdict seeds are < 1000)")
    import numpy as np

    from stages.autoopt.m3.evaluate import METHODS, run_jobs, seed_metrics
    from stages.autoopt.m3.problems import COMPLEX_CLASSES, problems
    from stages.autoopt.params import M3Params
    from stages.common.inference import judge

    warnings.filterwarnings("ignore")
    raw = json.loads((ROOT / "stages/autoopt/params.json").read_text())["autoopt"]["default"]["m3"]
    raw.update(nonconvex_upper=a.nonconvex_upper == "true", problems=[], multi=False, n_boot=200)
    if a.high_dim_budget:
        raw.update(high_dim_budget=a.high_dim_budget)
    if a.smoke:
        seeds = seeds[:1]
        raw.update(budget=200, high_dim_budget=400, workers=1)
    mp = M3Params(**raw)
    classes = [c for c in a.classes.split(",") if c] or list(COMPLEX_CLASSES)
    everything = problems()
    index = [i for i, p in enumerate(everything) if p.cls in classes]
    if a.smoke:
        index = [i for i in index if everything[i].name in ("step_f6_k5_z50", "rastrigin_2s")][:2] or index[:2]
    rows, per = [], {}
    for s in seeds:
        t = time.perf_counter()
        rs = run_jobs([(s, i, 0) for i in index], mp, f"seed {s}: {len(index)} problems")
        rows += rs
        m = seed_metrics(rs, mp, s)
        per[s] = m
        print(f"seed {s} ({time.perf_counter() - t:.1f} s wall, {mp.workers} processes): " + "; ".join(
            f"{c} " + " ".join(f"{k} {m['classes'][c][k]['success']:.2f}" for k in METHODS)
            for c in classes if c in m["classes"]), flush=True)
    for name, f in (("BOBD - IPOPT", lambda m: m["complex"]["margin_vs_ipopt"]),
                    ("control GA - IPOPT", lambda m: m["complex"]["ga_minus_ipopt"]),
                    ("BOBD - GA", lambda m: m["complex"]["margin_vs_ga"]),
                    ("control IPOPT - GA", lambda m: m["complex"]["success"]["ipopt"] - m["complex"]["success"]["ga"])):
        if not all("complex" in per[s] for s in seeds):
            break
        v = [f(per[s]) for s in seeds]
        j = judge(v, ">", 0.0, "interval")
        print(f"{name}: per seed {[round(x, 3) for x in v]}, mean {np.mean(v):+.3f}, interval {j.interval} -> {j.verdict}")
    for c in [c for c in classes if all(c in per[s]["classes"] for s in seeds)]:
        v = [per[s]["class_margins_vs_ipopt"].get(c) for s in seeds]
        g = [per[s]["class_margins_vs_ga"].get(c) for s in seeds]
        print(f"  {c}: BOBD - IPOPT {[round(x, 3) for x in v]}, BOBD - GA {[round(x, 3) for x in g]}")
    if a.out:
        Path(a.out).write_text(json.dumps({"seeds": seeds, "rows": rows}, default=str))


if __name__ == "__main__":
    main()
