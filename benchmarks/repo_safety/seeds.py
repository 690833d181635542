"""repo_safety seeds as an axis: the train stage's runs of five seeds in one batch per run kind (a
run axis in the arrays, as the stage runs them: every seed and instance of e.g. RePO with exact
gradients together, policy.train_batch) against one run after another, on calibration seeds only
(>= 1000).

    nice -n 19 python -m benchmarks.repo_safety.seeds [--seeds 1000,...] [--profile default] [--runs repo_exact,...]

It draws each seed's instances as prepare does (every f of the profile), times each run kind in
CPU seconds both ways, checks that every run's final policy, multiplier and training curve are the
same bit for bit, and prints the times and the ratio batched / one after another.
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
    ap.add_argument("--runs", default="", help="run kinds of stages.repo_safety.train.RUNS (default: all)")
    a, seeds = parse_seeds(ap)

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study
    from stages.repo_safety.data import fraction_key
    from stages.repo_safety.params import PARAMS
    from stages.repo_safety.prepare import build
    from stages.repo_safety.train import RUNS, train_runs

    limit_threads()
    _, p = load_study("repo_safety", PARAMS, profile=a.profile)
    runs = a.runs.split(",") if a.runs else list(RUNS)
    data = {(s, fraction_key(i.fraction)): (i.reward, i.cost, i.harmful) for s in seeds for i in build(p.prepare, s)}
    print(f"profile {a.profile}: {len(seeds)} seeds x {len(p.prepare.fractions)} instances "
          f"({p.prepare.n_prompts} prompts x {p.prepare.n_responses} responses) = {len(data)} runs per kind; "
          f"{p.train.steps} exact / {p.train.sampled.steps} sampled steps", flush=True)
    total = {True: 0.0, False: 0.0}
    same_all = True
    for name in runs:
        out, cpu = {}, {}
        for batched in (True, False):
            t0 = time.process_time()
            out[batched], _ = train_runs(data, p.prepare.kl_beta, p.prepare.budget, p.train, batched, runs=(name,))
            cpu[batched] = time.process_time() - t0
            total[batched] += cpu[batched]
        same = all(np.array_equal(out[True][k][name].pi, out[False][k][name].pi)
                   and out[True][k][name].lam == out[False][k][name].lam
                   and out[True][k][name].curve == out[False][k][name].curve for k in data)
        same_all &= same
        print(f"  {name}: batched {cpu[True]:.2f} CPU s, one after another {cpu[False]:.2f} CPU s, ratio "
              f"{cpu[True] / cpu[False]:.3f}; every run " + ("the same bit for bit" if same else "DIFFERS"), flush=True)
    print(f"all run kinds: batched {total[True]:.2f} CPU s, one after another {total[False]:.2f} CPU s, "
          f"ratio batched / one after another {total[True] / total[False]:.3f}")
    if not same_all:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
