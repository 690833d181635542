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

import time
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402


def main() -> None:
    ap = seed_parser(__doc__)
    ap.add_argument("--max-n", type=int, default=200, help="the n grid up to this size")
    a, seeds = parse_seeds(ap, max_n=100)

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
