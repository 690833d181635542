"""curriculum_rerm seeds as an axis: the train stage's compute for five seeds, all seeds in one batch
(their replications stacked along the batch axis of the ridge arrays and of the batched MLP)
against one seed after another, on calibration seeds only (>= 1000).

    nice -n 19 python -m benchmarks.curriculum_rerm.seeds [--seeds 1000,1001,1002,1003,1004] [--repeats 1]

For each mode it times ``train.run_all`` (ridge, SGD and digits; the profile's sizes) in CPU
seconds (best of ``--repeats``), checks that every seed's figures are the same bit for bit in
both modes, and prints the times and the ratio batched / one after another; then the same for
the first seed alone (one seed's compute). The stage runs all its seeds in one batch.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1000,1001,1002,1003,1004")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:  # the smoke profile's sizes; options given explicitly still win
        ap.set_defaults(seeds="1000,1001", profile="smoke")
        a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    if min(seeds) < 1000:
        raise SystemExit("benchmarks use calibration seeds (>= 1000) only")

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study
    from stages.curriculum_rerm.params import PARAMS
    from stages.curriculum_rerm.train import run_all

    limit_threads()
    _, p = load_study("curriculum_rerm", PARAMS, profile=a.profile)
    tp = p.train
    print(f"profile {a.profile}: ridge {tp.ridge.replications} and digits {tp.digits.replications} replications a seed, "
          f"digits {tp.digits.steps} steps a stage, hidden {list(tp.digits.hidden)}", flush=True)
    run_all(tp, seeds[:1])                                   # warm-up: imports, the digits file, allocators

    def timed(run_seeds, group):
        best, out = None, None
        for _ in range(a.repeats):
            t0 = time.process_time()
            out = run_all(tp, run_seeds, group=group)
            cpu = time.process_time() - t0
            best = cpu if best is None else min(best, cpu)
        return best, out

    t_seq, seq = timed(seeds, 1)
    t_bat, bat = timed(seeds, None)
    same = all(np.array_equal(seq[s][k], bat[s][k]) for s in seeds for k in seq[s])
    print(f"  {len(seeds)} seeds {seeds}: one after another {t_seq:.2f} CPU s, all in one batch {t_bat:.2f} CPU s; "
          f"ratio batched / sequential = {t_bat / t_seq:.2f}; every seed's figures "
          f"{'identical' if same else 'DIFFERENT'} in both", flush=True)
    t_one, _ = timed(seeds[:1], None)
    print(f"  1 seed [{seeds[0]}]: {t_one:.2f} CPU s; {len(seeds)} seeds batched = {t_bat / t_one:.2f}x one seed")
    if not same:
        raise SystemExit("a seed's figures depend on the seeds batched beside it")


if __name__ == "__main__":
    main()
