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

import time
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402


def main() -> None:
    ap = seed_parser(__doc__)
    ap.add_argument("--repeats", type=int, default=1)
    a, seeds = parse_seeds(ap)

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
