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

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import (  # noqa: E402
    add_one_seed_args, parse_seeds, seed_parser, seeds_main)


def one_seed(seed: int, profile: str) -> dict:
    """prepare + train compute of one seed: posterior.npz's arrays for it."""
    from stages.common.runtime.params import load_study
    from stages.nav_knowledge.params import PARAMS
    from stages.nav_knowledge.prepare import generate
    from stages.nav_knowledge.train import infer_seed

    _, p = load_study("nav_knowledge", PARAMS, profile=profile)
    arrays, _, _ = infer_seed(generate(p.prepare, seed), p.prepare, p.train, seed, progress=False)
    return arrays


def main() -> None:
    ap = add_one_seed_args(seed_parser(__doc__))
    a, seeds = parse_seeds(ap)
    seeds_main(a, seeds, lambda s: one_seed(s, a.profile), __file__,
               label=f"profile {a.profile}", what="prepare + train compute", figures="arrays",
               note="imports already paid by this process")


if __name__ == "__main__":
    main()
