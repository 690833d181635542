"""t2mir calibration on calibration seeds (>= 1000, never a verdict seed): for each seed, the
stages' own per-seed functions (prepare_seed, train_seed, evaluate_seed) with the profile's
params (``--set train.steps=300`` to change one), and the figures the claims read: T2MIR - dense
(the must), routing-free MoE ("uniform") - dense (its control), T2MIR's in-context gains (the
shoulds). Then the interval each check would get over these seeds.

    nice -n 10 python benchmarks/t2mir/calibration.py [--seeds 1000,1001,1002] [--set train.steps=300]
    --smoke: the smoke profile and two seeds, in seconds (what CI runs).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.stats import t_interval
    from stages.t2mir.icl import STUDY_VARIANTS
    from stages.t2mir.params import PARAMS
    from stages.t2mir.run import evaluate_seed, prepare_seed, tasks_of, train_seed

    a, seeds = parse_seeds(seed_parser(__doc__, sets=True), argv)
    limit_threads(1)
    p = study_params("t2mir", PARAMS, a)
    print(f"profile {a.profile}, steps {p.train.steps}, calibration seeds {seeds}", flush=True)
    rows = []
    for s in seeds:
        t0 = time.process_time()
        tasks = tasks_of(prepare_seed(p.prepare.size, p.prepare.holdout, p.prepare.pool, s))
        models, _ = train_seed(tasks, p.train.model_dump(), s, STUDY_VARIANTS)
        t1 = time.process_time()
        m, _ = evaluate_seed(models, tasks, p.train.k, p.evaluate.queries_per_task, p.evaluate.episodes_per_task,
                             p.evaluate.horizon, s,
                             p.evaluate.train_queries_per_task)
        t2 = time.process_time()
        row = {"t2mir-dense": m["t2mir_minus_dense"]["return"], "uniform-dense": m["uniform_minus_dense"]["return"],
               "t2mir acc gain": m["t2mir"]["icl_accuracy_gain"], "t2mir ret gain": m["t2mir"]["icl_return_gain"]}
        rows.append(row)
        print(f"seed {s}: train {t1 - t0:.1f}s eval {t2 - t1:.1f}s CPU | return dense {m['dense']['heldout_return']:.2f} "
              f"uniform {m['uniform']['heldout_return']:.2f} t2mir {m['t2mir']['heldout_return']:.2f} | "
              + " ".join(f"{k} {v:+.3f}" for k, v in row.items()), flush=True)
    if len(seeds) > 1:
        for key in rows[0]:
            x = np.array([r[key] for r in rows])
            ci = t_interval(x, 0.90)          # two-sided 90% = the one-sided 95% bound of the ledger
            print(f"  {key}: mean {x.mean():+.3f}, one-sided 95% lower bound {ci['low']:+.3f}", flush=True)


if __name__ == "__main__":
    main()
