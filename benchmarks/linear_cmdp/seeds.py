"""linear_cmdp seeds as an axis: the train stage's runs of five seeds in one lockstep batch (a seed
dimension in the arrays: what the stage does) against the same runs one seed after another (one
batch per seed), on calibration seeds only (>= 1000).

    nice -n 10 python -m benchmarks.linear_cmdp.seeds [--seeds 1000,...] [--shorten 10]

Both ways run every agent of the profile on every seed's binding instances (the profile's
counts); ``--shorten`` divides every agent's K by a factor (default 10: 10^4 -> 1000 and
2000 -> 200, so the agents fall into the same lockstep batches as in the stage; the cost is per
lockstep episode, so the ratio is the whole runs'; 1 = the profile's K). It prints the CPU
seconds of each way, by part, their ratio, and checks that every run's per-episode values are
the same bit for bit both ways.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds, K / 10.
"""
from __future__ import annotations

import time
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402


def main() -> None:
    ap = seed_parser(__doc__)
    ap.add_argument("--shorten", type=int, default=10, help="divide every agent's K by this (1: the profile's)")
    a, seeds = parse_seeds(ap)

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study
    from stages.linear_cmdp.instances import as_record
    from stages.linear_cmdp.params import PARAMS
    from stages.linear_cmdp.prepare import seed_instances
    from stages.linear_cmdp.train import train_runs

    limit_threads(1)
    _, p = load_study("linear_cmdp", PARAMS, profile=a.profile)
    tp = p.train
    if a.shorten > 1:
        tp = tp.model_copy(update={"agents": [x.model_copy(update={"episodes": max(10, x.episodes // a.shorten)})
                                              for x in tp.agents]})
    insts = {s: [as_record(r) for r in seed_instances(p.prepare, s, log=lambda _: None)[0]] for s in seeds}
    print(f"profile {a.profile}: {sum(map(len, insts.values()))} instances over seeds {seeds}; agents "
          f"{', '.join(f'{x.name} (K={x.episodes})' for x in tp.agents)}", flush=True)
    quiet = dict(log=lambda _: None, progress=False)

    t0 = time.process_time()
    batched, tb = train_runs([r for s in seeds for r in insts[s]], tp, **quiet)
    cpu_b = time.process_time() - t0
    parts = ", ".join(f"{k} {v['cpu_seconds']:.1f}" for k, v in tb.items())
    print(f"  all seeds in one lockstep batch: {cpu_b:.1f} CPU s ({parts})", flush=True)
    t0 = time.process_time()
    seq, ts = {}, {}
    for s in seeds:
        out, t = train_runs(insts[s], tp, **quiet)
        seq.update(out)
        for k, v in t.items():
            ts[k] = ts.get(k, 0.0) + v["cpu_seconds"]
    cpu_s = time.process_time() - t0
    parts = ", ".join(f"{k} {v:.1f}" for k, v in ts.items())
    print(f"  one seed after another:          {cpu_s:.1f} CPU s ({parts})", flush=True)
    for k in tb:
        print(f"    {k}: batched / sequential = {tb[k]['cpu_seconds'] / ts[k]:.2f}")
    same = sorted(batched) == sorted(seq) and all(np.array_equal(batched[k], seq[k]) for k in batched)
    print(f"batched / sequential = {cpu_b / cpu_s:.2f}; every run the same bit for bit: {same}")
    if not same:
        raise SystemExit("the batched runs differ from the sequential ones")


if __name__ == "__main__":
    main()
