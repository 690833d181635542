"""repo_safety calibration, on calibration seeds only (>= 1000, never a verdict seed): the prepare
and train stages' work for five seeds (the stages' own functions), every claim and its control
judged as the ledger judges the verdict seeds (stages.common.claims.evaluate on the study's
claims.yaml, rules and controls included), and the compute it took.

    nice -n 19 python -m benchmarks.repo_safety.calibration [--seeds 1000,...] [--profile default]
        [--set train.tightened_share=0.05 ...]

What it was used for (README: repo_safety, Calibration): whether each must's control fails where
the must holds (the check sees RePO's per-prompt rectified constraint), and whether five seeds of
the default profile fit the study's budget. ``--set`` changes a key of the profile (dotted, under
the study's section) for this run only. It writes nothing into the checkout. ``--smoke`` runs it
at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import time
from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def figures(p, seeds: list[int], batched: bool = True) -> tuple[dict, dict]:
    """(metrics in the layout of reports/repo_safety/metrics.json, CPU seconds per part) of
    ``seeds``, computed by the stages' functions in this process."""
    from stages.common.seeds import per_seed_metrics
    from stages.repo_safety.data import fraction_key
    from stages.repo_safety.evaluate import seed_metrics
    from stages.repo_safety.prepare import build, summary
    from stages.repo_safety.train import train_seeds

    c0 = time.process_time()
    by_seed = {s: build(p.prepare, s) for s in seeds}
    cpu = {"prepare": time.process_time() - c0}
    data = {(s, fraction_key(i.fraction)): (i.reward, i.cost, i.harmful) for s, insts in by_seed.items() for i in insts}
    figs, _, _, seconds = train_seeds(data, p.prepare.kl_beta, p.prepare.budget, p.train, batched)
    cpu.update(seconds)
    train = per_seed_metrics({s: {"instances": figs[s]} for s in seeds}, beta=p.prepare.kl_beta,
                             budget=p.prepare.budget, margin=p.train.margin, tightened_share=p.train.tightened_share)
    prep = per_seed_metrics({s: summary(insts) for s, insts in by_seed.items()})
    return seed_metrics(train, prep, p.evaluate.primary_fraction), cpu


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    a, seeds = parse_seeds(ap)

    from stages.common.claims import evaluate, load_claims, lookup
    from stages.common.device import limit_threads
    from stages.repo_safety.params import PARAMS

    limit_threads()
    p = study_params("repo_safety", PARAMS, a)
    t0 = time.perf_counter()
    metrics, cpu = figures(p, seeds)
    print(f"profile {a.profile} {' '.join(a.set)}; calibration seeds {seeds}; {sum(cpu.values()):.1f} CPU s "
          f"({', '.join(f'{k} {v:.1f}' for k, v in cpu.items())}), {time.perf_counter() - t0:.1f} s wall")
    cf = load_claims(REPO / "stages/repo_safety/claims.yaml")
    for r in evaluate(cf, metrics, seeds):
        if r["verdict"] == "retired":
            continue
        iv = "" if r["interval"] is None else f" interval [{r['interval'][0]:.4g}, {r['interval'][1]:.4g}]"
        print(f"{r['id']} ({r['level']}, {r['rule']}): per seed [{', '.join(f'{v:.4g}' for v in r['per_seed'].values())}]"
              f" mean {r['mean']:.4g}{iv} {r['op']} {r['threshold']} -> {r['verdict']}")
        if r["control"]:
            c = r["control"]
            civ = "" if c["interval"] is None else f" interval [{c['interval'][0]:.4g}, {c['interval'][1]:.4g}]"
            print(f"    control {c['metric']}: per seed [{', '.join(f'{v:.4g}' for v in c['per_seed'].values())}]"
                  f" mean {c['mean']:.4g}{civ} -> {c['verdict']}")
    print("context (per seed):")
    for key in ("data.lambda_star", "data.correlation", "data.rejected_total", "exact.baseline.cost_excess",
                "exact.baseline.violating_harmful", "exact.baseline.violating_benign", "exact.repo.lambda",
                "exact.baseline_margin.cost_excess", "exact.baseline_margin.helpfulness_ratio",
                "exact.tightened.violating_fraction", "exact.tightened.lambda", "exact.tightened.avg_cost",
                "optimum.lp_over_baseline", "optimum.kl_margin_over_baseline", "optimum.baseline_lambda_error",
                "exact.repo.avg_cost", "sampled.repo.avg_cost", "sampled.repo.lambda"):
        vals = [lookup(metrics["per_seed"][str(s)], key) for s in seeds]
        print(f"  {key}: [{', '.join('-' if v is None else f'{v:.4g}' for v in vals)}]")
    sw = metrics["sweep"]
    print(f"sweep (mean over seeds) f = {sw['fractions']}: RePO/baseline helpfulness "
          f"{[round(v, 3) for v in sw['exact']['helpfulness_ratio']]}, tightened/baseline "
          f"{[round(v, 3) for v in sw['exact']['tightened_helpfulness_ratio']]}, baseline violating "
          f"{[round(v, 3) for v in sw['exact']['baseline_violating']]}, baseline with margin violating "
          f"{[round(v, 3) for v in sw['exact']['baseline_margin_violating']]}")


if __name__ == "__main__":
    main()
