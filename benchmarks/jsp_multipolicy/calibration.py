"""jsp_multipolicy calibration, on calibration seeds only (>= 1000, never a verdict seed): the whole
experiment of the stages (test shops and CP-SAT references per seed, the trained arms, best-of-
samples gaps) at a profile's sizes with ``--set`` overrides, judged as the ledger judges the
verdict seeds (stages.common.inference.judge: the 90 % t-interval over the seeds of the per-seed
figure), with each must's control; then the CPU seconds of every part.

    nice -n 10 python -m benchmarks.jsp_multipolicy.calibration [--seeds 1000,...] [--set train.steps=150]
        [--arms single,multi,blind,l2d] [--tests /tmp/jsp_tests.npz]

``--arms`` trains only those arms (the others' checks are skipped), ``--tests`` keeps the solved
test shops in a file and reuses them while the seeds, counts and limits are the same (the CP-SAT
references are the slow part). ``--smoke``: the smoke profile, two seeds, in seconds (what CI
runs). Prints per seed and arm the mean gaps, the checks' per-seed figures, means, intervals and
verdicts (a must: its control's verdict beside it).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402

# the checks claims.yaml registers: (id, level, metric, baseline, control, op, threshold)
CHECKS = [
    ("multi_beats_l2d_jssp10", "must", "gap10.multi", "gap10.l2d", "gap10.single", "<", 0.0),
    ("multi_beats_l2d_flow10", "must", "gapflow.multi", "gapflow.l2d", "gapflow.single", "<", 0.0),
    ("multi_beats_single_10x10", "must", "gap10.multi", "gap10.single", "gap10.blind", "<", 0.0),
    ("learned_beat_rules_10x10", "must", "gap10.worst_learned_minus_best_rule", None,
     "gap10.untrained_minus_best_rule", "<", 0.0),
    ("multi_beats_single_15x15", "should", "gap15.multi", "gap15.single", None, "<", 0.0),
    ("multi_beats_single_flow", "should", "gapflow.multi", "gapflow.single", None, "<", 0.0),
]


def lookup(tree, dotted):
    for k in dotted.split("."):
        if not isinstance(tree, dict) or k not in tree:
            return None
        tree = tree[k]
    return tree


def judged(figs, seeds, metric, baseline, op, threshold):
    from stages.common.inference import judge

    vals = []
    for s in seeds:
        a, b = lookup(figs[s], metric), lookup(figs[s], baseline) if baseline else 0.0
        vals.append(None if a is None or b is None else a - b)
    return vals, judge(vals, op, threshold, "interval")


def load_or_solve(path, seeds, p):
    """The solved test shops of ``seeds``: from ``path`` when it holds the same seeds, counts and
    limits, else solved (and written there)."""
    import json
    from pathlib import Path

    import numpy as np

    from stages.jsp_multipolicy.refs import solve

    pr = p.prepare
    counts = {"g10": pr.n_test_10, "g15": pr.n_test_15, "flow": pr.n_test_flow}
    limits = {"g10": pr.cpsat_limit_10, "g15": pr.cpsat_limit_15, "flow": pr.cpsat_limit_flow}
    key = json.dumps({"seeds": seeds, "counts": counts, "limits": limits}, sort_keys=True)
    if path and Path(path).exists():
        z = np.load(path)
        if str(z["key"]) == key:
            return {s: {k.split("|", 1)[1]: z[k] for k in z.files if k.startswith(f"{s}|")} for s in seeds}, 0.0, True
    tests, wall = solve(seeds, counts, limits, pr.workers)
    if path:
        np.savez(path, key=np.array(key), **{f"{s}|{k}": v for s in seeds for k, v in tests[s].items()})
    return tests, wall, False


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--arms", default="single,multi,blind,l2d", help="arms to train (comma-separated)")
    ap.add_argument("--tests", default="", help="file that keeps the solved test shops between runs")
    a, seeds = parse_seeds(ap)

    import numpy as np

    from stages.common.device import limit_threads
    from stages.jsp_multipolicy.experiment import figures, gaps, train_all, untrained
    from stages.jsp_multipolicy.params import PARAMS

    limit_threads(1)
    p = study_params("jsp_multipolicy", PARAMS, a)
    arms = [x for x in a.arms.split(",") if x]
    print(f"calibration seeds {seeds}, profile {a.profile}, overrides {a.set or 'none'}, arms {arms}", flush=True)
    c0 = time.process_time()
    tests, wall, cached = load_or_solve(a.tests, seeds, p)
    cpsat_cpu = sum(float(t[f"{k}_solver_s"].sum()) for t in tests.values() for k in ("g10", "g15", "flow"))
    print(f"test shops: {'from ' + a.tests if cached else f'CP-SAT {wall:.1f} s wall'}, solver time "
          f"{cpsat_cpu:.1f} s in all; proved optimal: " + ", ".join(
              f"{k} {np.mean([t[f'{k}_optimal'].mean() for t in tests.values()]):.0%}" for k in ("g10", "g15", "flow")),
          flush=True)
    nets, hist, cpu = train_all(seeds, p.train, arms=arms)
    for arm in arms:
        steps = p.train.l2d.updates if arm == "l2d" else p.train.steps
        print(f"train {arm}: {cpu[arm]:.1f} CPU s for {len(seeds)} seeds ({cpu[arm] / len(seeds):.1f} a seed, "
              f"{steps} steps); last logged: " + ", ".join(
                  f"{s}: {hist[arm][s][-1]['loss']:.3f}/{hist[arm][s][-1]['mean_makespan']:.0f}" for s in seeds),
              flush=True)
    e0 = time.process_time()
    if {"single", "multi"} <= set(arms):
        nets |= untrained(seeds, p.train)
    per_shop = gaps(tests, nets, seeds, p.evaluate.samples)
    eval_cpu = time.process_time() - e0
    figs = figures(per_shop, tests, p.evaluate.ci_level)
    for key in ("gap10", "gapflow", "gap15"):
        methods = [m for m in (*arms, "l2d_greedy", "untrained_single", "untrained_multi", "SPT", "MWKR", "MOPNR")
                   if m in figs[seeds[0]].get(key, {})]
        if not methods:
            continue
        print(f"{key} mean gap % per seed: " + "; ".join(
            f"{m} " + "/".join(f"{figs[s][key][m]:.2f}" for s in seeds) + f" (mean {np.mean([figs[s][key][m] for s in seeds]):.2f})"
            for m in methods), flush=True)
    for cid, level, metric, base, control, op, thr in CHECKS:
        vals, j = judged(figs, seeds, metric, base, op, thr)
        if j.verdict == "not run":
            continue
        line = (f"{level} {cid}: per seed " + ", ".join(f"{v:+.2f}" for v in vals)
                + f"; mean {j.mean:+.2f} [{j.interval[0]:+.2f}, {j.interval[1]:+.2f}] -> {j.verdict}")
        if control:
            cv, cj = judged(figs, seeds, control, base, op, thr)
            if cj.verdict != "not run":
                line += (f"; control {control}: " + ", ".join(f"{v:+.2f}" for v in cv)
                         + f"; mean {cj.mean:+.2f} [{cj.interval[0]:+.2f}, {cj.interval[1]:+.2f}] -> {cj.verdict}")
        print(line, flush=True)
    print(f"CPU seconds: CP-SAT solver {cpsat_cpu:.1f}" + (" (cached)" if cached else "") + ", train "
          + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()) + f", evaluate {eval_cpu:.1f}; this process "
          f"{time.process_time() - c0:.1f}", flush=True)


if __name__ == "__main__":
    main()
