"""ensemble_tail seeds as an axis: the train stage's sweep for several seeds one after another in
one process (what the stage does) against the same replications in chunks as large as all the
seeds' together (what a seed dimension in the arrays would give), on calibration seeds only
(>= 1000).

    nice -n 10 python -m benchmarks.ensemble_tail.seeds [--seeds 1000,...] [--max-n 200]

The stage's arrays are already batched: a chunk of ``chunk`` replications x B subsamples is one
set of index arrays. A seed dimension would stack the seeds' chunks; its cost is what the same
sweep costs with chunks ``len(seeds)`` times larger (one seed's streams, ``len(seeds)`` x the
replications: the same work, bigger arrays). The LP sweep only, on the profile's n grid up to
``--max-n``. Prints the CPU seconds of both ways and their ratio (batched / one after another).
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1000,1001,1002,1003,1004")
    ap.add_argument("--max-n", type=int, default=200, help="the n grid up to this size")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:  # the smoke profile's sizes; options given explicitly still win
        ap.set_defaults(seeds="1000,1001", profile="smoke", max_n=100)
        a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    if min(seeds) < 1000:
        raise SystemExit("benchmarks use calibration seeds (>= 1000) only")

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study
    from stages.ensemble_tail import problems as P
    from stages.ensemble_tail.params import PARAMS
    from stages.ensemble_tail.train import sweep

    limit_threads(1)
    _, p = load_study("ensemble_tail", PARAMS, profile=a.profile)
    tp = p.train
    grid = [n for n in tp.n_grid if n <= a.max_n]
    cvec = np.asarray(tp.lp.costs, float)
    make = (lambda rng, r, n: P.lp_costs(rng, cvec, tp.lp.tail_index, r, n))
    excess = P.true_excess("lp", c=cvec)
    R, S = tp.replications, len(seeds)
    print(f"profile {a.profile}: LP n = {grid}, {R} replications a seed, chunk {tp.chunk}, seeds {seeds}", flush=True)

    def run(seed, reps, chunk):
        return sweep("lp", make, excess, grid, reps, chunk, tp.ensembles, tp.lp.threshold, seed)

    t0 = time.process_time()
    seq = {s: run(s, R, tp.chunk) for s in seeds}
    cpu_seq = time.process_time() - t0
    print(f"  one seed after another (chunk {tp.chunk}):       {cpu_seq:.2f} CPU s", flush=True)
    t0 = time.process_time()
    big = run(seeds[0], R * S, tp.chunk * S)
    cpu_b = time.process_time() - t0
    print(f"  seeds' replications batched (chunk {tp.chunk * S}): {cpu_b:.2f} CPU s", flush=True)
    rate = [np.mean([seq[s]["counts"]["move"][i] / R for s in seeds]) for i in range(len(grid))]
    rate_b = [k / (R * S) for k in big["counts"]["move"]]
    print(f"  MoVE tail rate by n, sequential {np.round(rate, 4).tolist()}, batched {np.round(rate_b, 4).tolist()}")
    print(f"batched / sequential = {cpu_b / cpu_seq:.2f}")


if __name__ == "__main__":
    main()
