"""fgbench seeds as an axis: the train stage's compute for several seeds in one process sharing
what does not depend on the seed (the stage's way: fingerprints and FG-edit parts computed once
per molecule and question, ``train.Caches``), against one seed after another each starting
empty (as separate one-seed runs compute it), on calibration seeds only (>= 1000).

    nice -n 19 python -m benchmarks.fgbench.seeds [--seeds 1000,...] [--profile default] [--pool FILE]

The seeds' data are the stage's: the seed-free pool (prepare.build_pool, built here or read from
``--pool``, as benchmarks/fgbench/calibration.py keeps it) split per seed (prepare.seed_split).
After an untimed warm-up it runs each way ``--repeats`` times, alternating, and prints the
fastest CPU seconds of each, their ratio, and checks that every seed's predictions are the same
in both. The models themselves (random forests, a sparse text model) have no seed
dimension to batch: each seed's split gives it other training rows. ``--smoke`` runs it at tiny
sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import pickle
import time
from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402


def main() -> None:
    ap = seed_parser(__doc__)
    ap.add_argument("--pool", default="", help="a pickled pool from benchmarks/fgbench/calibration.py --pool")
    ap.add_argument("--repeats", type=int, default=1, help="runs of each way (alternating; the fastest kept)")
    a, seeds = parse_seeds(ap)

    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study
    from stages.fgbench import prepare, train
    from stages.fgbench.params import PARAMS

    limit_threads()
    _, p = load_study("fgbench", PARAMS, profile=a.profile)
    if a.smoke:      # a smaller pool than the smoke profile's: the script's path in seconds
        p = p.model_copy(update={"prepare": p.prepare.model_copy(update={"max_molecules": 150})})
    key = p.prepare.model_dump_json()
    pool = None
    if a.pool and Path(a.pool).exists():
        saved = pickle.loads(Path(a.pool).read_bytes())
        pool = saved["pool"] if saved["key"] == key else None
    if pool is None:
        pool = prepare.build_pool(p.prepare, log=lambda *x: None)
    data = {s: prepare.seed_split(pool, p.prepare, s) for s in seeds}

    def run(shared: bool) -> tuple[float, dict]:
        caches = train.Caches(p.train) if shared else None
        out, t = {}, 0.0
        for s in seeds:
            rows, mol_rows, _ = data[s]
            c = time.process_time()
            res = train.train_seed(rows["train"], rows["test"], mol_rows, p.train, s,
                                   caches if shared else train.Caches(p.train), progress=False)
            t += time.process_time() - c
            out[s] = (res["pairs"], res["molecules"])
        return t, out

    # warm-up, untimed: the first call pays lazy imports and torch's start; then each way a_repeats
    # times, alternating, keeping each way's fastest
    train.train_seed(*[data[seeds[0]][0][k] for k in ("train", "test")], data[seeds[0]][1], p.train, seeds[0],
                     train.Caches(p.train), progress=False)
    times = {True: [], False: []}
    for _ in range(a.repeats):
        for shared in (False, True):
            t, out = run(shared)
            times[shared].append(t)
            if shared:
                one = out
            else:
                seq = out
    t_one, t_seq = min(times[True]), min(times[False])
    same = all(seq[s] == one[s] for s in seeds)
    print(f"profile {a.profile}, calibration seeds {seeds}: train compute (CPU s, this process)")
    print(f"  one seed after another, each from empty caches: {t_seq:.2f}")
    print(f"  one process, fingerprints and FG edits shared (the stage): {t_one:.2f}")
    print(f"  ratio shared / one after another: {t_one / t_seq:.3f}; every seed's predictions "
          + ("the same in both" if same else "DIFFER"))
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
