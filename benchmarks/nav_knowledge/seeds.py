"""nav_knowledge: the verdict seeds in one process (as the stages run them) vs one process per seed.

    nice -n 10 python -m benchmarks.nav_knowledge.seeds [--seeds 1000,1001,...] [--profile default]
    --smoke: the smoke profile's sizes and two seeds, in seconds (what CI runs).

The study's compute is pure-Python graph search (Dijkstra, the incremental repair) inside
per-agent samplers whose states are Python lists: there is no tensor to give a seed dimension, so
"batched" here means what the stages do, every seed in one process one after another
(stages.common.seeds.run_seeds: imports and process start paid once), against one process per
seed (what a DVC matrix stage over seeds would run). Both run prepare.generate and
train.infer_seed for each seed; the script prints wall and CPU seconds of both, their ratio, and
checks that every seed's arrays are the same bit for bit either way (a seed's figures depend on
that seed alone). Calibration seeds only (>= 1000): never a verdict seed.
"""
from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def one_seed(seed: int, profile: str) -> dict:
    """prepare + train compute of one seed: posterior.npz's arrays for it."""
    from stages.common.runtime.params import load_study
    from stages.nav_knowledge.params import PARAMS
    from stages.nav_knowledge.prepare import generate
    from stages.nav_knowledge.train import infer_seed

    _, p = load_study("nav_knowledge", PARAMS, profile=profile)
    arrays, _, _ = infer_seed(generate(p.prepare, seed), p.prepare, p.train, seed, progress=False)
    return arrays


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cpu_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1000,1001,1002,1003,1004")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--smoke", action="store_true", help="smoke sizes, two seeds (CI)")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)        # child: one seed, arrays to --out
    ap.add_argument("--out", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.smoke:
        ap.set_defaults(seeds="1000,1001", profile="smoke")
        a = ap.parse_args()
    if a.one is not None:
        import numpy as np

        np.savez(a.out, **one_seed(a.one, a.profile))
        return
    seeds = [int(s) for s in a.seeds.split(",")]
    if min(seeds) < 1000:
        raise SystemExit("this benchmark uses calibration seeds >= 1000 only (the verdict seeds are < 1000)")
    import numpy as np

    from stages.common.seeds import run_seeds

    # one process per seed (each pays interpreter start and imports, as a matrix stage would)
    with tempfile.TemporaryDirectory() as tmp:
        w0, c0 = time.perf_counter(), cpu_children()
        for s in seeds:
            subprocess.run([sys.executable, "-m", "benchmarks.nav_knowledge.seeds", "--one", str(s),
                            "--profile", a.profile, "--out", f"{tmp}/{s}.npz"], cwd=REPO, check=True)
        wall_per, cpu_per = time.perf_counter() - w0, cpu_children() - c0
        apart = {s: dict(np.load(f"{tmp}/{s}.npz")) for s in seeds}
    # every seed in this process, as the train stage runs them
    w0, c0 = time.perf_counter(), cpu_self()
    together = run_seeds(seeds, lambda s: one_seed(s, a.profile), what="seed")
    wall_one, cpu_one = time.perf_counter() - w0, cpu_self() - c0
    same = all(set(apart[s]) == set(together[s]) and all(np.array_equal(apart[s][k], together[s][k])
                                                         for k in apart[s]) for s in seeds)
    print(f"profile {a.profile}, calibration seeds {seeds}: prepare + train compute")
    print(f"  one process per seed: {wall_per:.1f} s wall, {cpu_per:.1f} s CPU")
    print(f"  all seeds in one process (the stages): {wall_one:.1f} s wall, {cpu_one:.1f} s CPU "
          f"(imports already paid by this process)")
    print(f"  ratio one process / one per seed: wall {wall_one / wall_per:.2f}, CPU {cpu_one / cpu_per:.2f}")
    print(f"  every seed's arrays the same bit for bit both ways: {same}")
    if not same:
        raise SystemExit("a seed's arrays differ between the two ways: its figures do not depend on its seed alone")


if __name__ == "__main__":
    main()
