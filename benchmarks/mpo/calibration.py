"""mpo calibration, on calibration seeds only (>= 1000, never a verdict seed): the claims' figures
at the profile's sizes, and the headline must judged with its control as the ledger will judge it.

The must: the discovered loss (CMA-ES over the whole family at the target flip rate) scores more
than the best baseline there (the best of DPO(beta=1) and the validation-selected DPO, cDPO, ORPO,
by their test scores), paired per seed; the control: the same CMA-ES budget over the DPO/cDPO
corner only (log beta, eps, lam), against the same baseline, by the same rule (the one-sided 95 %
t-interval of the per-seed mean, stages/common/inference.judge) and threshold (0).

    nice -n 19 python benchmarks/mpo/calibration.py [--seeds 1000,...] [--set train.steps=200] [--broken]

``--broken`` flips the search's fitness sign (it minimises the score): the must should fail.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402

FIGURES = ("noise_dpo1_ratio_max", "control_noise_dpo1_ratio_low", "mixed_orpo_over_dpo",
           "control_clean_orpo_over_dpo", "discovered_over_tuned_dpo_min", "discovered_minus_dpo1_min",
           "control_discovered_minus_dpo1_clean", "best_baseline_target", "discovered_score_target",
           "corner_search_score_target", "discovered_minus_corner_search_target",
           "corner_search_over_tuned_dpo_min", "corner_search_minus_dpo1_min")


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--broken", action="store_true", help="minimise the fitness (a search that must lose)")
    a, seeds = parse_seeds(ap)

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.mpo import experiment as ex
    from stages.mpo.params import PARAMS

    limit_threads(1)
    prm = study_params("mpo", PARAMS, a)
    p, t = prm.prepare, prm.train
    per = {}
    t0 = time.process_time()
    for seed in seeds:
        ts = time.process_time()
        ref = ex.build_reference(p, seed)
        data = ex.build_draws(p, ref, seed)
        sc = ex.Scorer(p, t, ref, data, seed, ex.score_bounds(seed, max(t.episodes, 16)))
        out = ex.run_all(sc, p, t, seed, sign=-1.0 if a.broken else 1.0)
        m = per[seed] = ex.claim_metrics(out["results"], p.flips, p.target_flip)
        print(f"seed {seed}: {out['fits']} fits, {time.process_time() - ts:.1f} s CPU; "
              + " ".join(f"{k}={m[k]:.3f}" for k in FIGURES if k in m), flush=True)
        print(f"  discovered {json.dumps({k: round(v, 3) for k, v in out['discovered'].items()})}; "
              f"corner search {json.dumps({k: round(v, 3) for k, v in out['corner_search'].items()})}; "
              f"tuned - DPO(beta=1) on test {json.dumps({k: round(v, 3) for k, v in m['tuned_minus_dpo1_test'].items()})}",
              flush=True)
    print(f"total {time.process_time() - t0:.1f} s CPU for {len(seeds)} seeds")
    base = [per[s]["best_baseline_target"] for s in seeds]
    for name, key in (("must (discovered - best baseline)", "discovered_score_target"),
                      ("control (corner search - best baseline)", "corner_search_score_target")):
        d = [per[s][key] - b for s, b in zip(seeds, base)]
        j = judge(d, ">", 0.0, "interval")
        print(f"{name}: per seed {', '.join(f'{x:+.3f}' for x in d)}; mean {np.mean(d):+.3f}, "
              f"interval {j.interval}, {j.verdict}")
    for key, op, thr in (("noise_dpo1_ratio_max", "<=", 0.6), ("mixed_orpo_over_dpo", "<=", 0.5),
                         ("discovered_over_tuned_dpo_min", ">=", 0.9), ("discovered_minus_dpo1_min", ">", 0.0)):
        v = [per[s][key] for s in seeds]
        j = judge(v, op, thr, "interval")
        print(f"{key} {op} {thr}: mean {np.mean(v):.3f}, interval {j.interval}, {j.verdict}")


if __name__ == "__main__":
    main()
