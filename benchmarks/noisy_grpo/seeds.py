"""noisy_grpo: the verdict seeds in one process (as the train stage runs them) vs one process per seed.

    nice -n 10 python benchmarks/noisy_grpo/seeds.py [--seeds 1000,1001,...] [--profile default]
    --smoke: the smoke profile's sizes and two seeds, in seconds (what CI runs).

Each seed is a sequential RL loop (sample a batch of chains, score it, update) of SFT + 4 methods x
the replicates; the four methods of a seed could share a model dimension, but the RL steps of a
seed depend on the previous ones and their cost is dominated by per-step Python and small matmuls
of a 30k-parameter model, so "batched" here means what the stage does: every seed in one process
one after another (stages.common.seeds.run_seeds: imports and process start paid once), against
one process per seed (what a DVC matrix stage over seeds would run). Both run
core.make_dataset + core.train_seed for each seed; the script prints wall and CPU seconds of
both, their ratio, and checks that every seed's policies come out the same bit for bit either way.
Calibration seeds only (>= 1000): never a verdict seed.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import (  # noqa: E402
    add_one_seed_args, parse_seeds, seed_parser, seeds_main, study_params)


def one_seed(seed: int, a) -> dict:
    from stages.noisy_grpo import core
    from stages.noisy_grpo.params import PARAMS

    p = study_params("noisy_grpo", PARAMS, a)
    states = core.train_seed(seed, core.make_dataset(seed, p.prepare), p.prepare, p.train, progress=False)[0]
    return {f"{k}/{n}": t.numpy() for k, sd in states.items() for n, t in sd.items()}


def main() -> None:
    ap = add_one_seed_args(seed_parser(__doc__))
    a, seeds = parse_seeds(ap)

    from stages.common.device import limit_threads

    limit_threads(1)
    seeds_main(a, seeds, lambda s: one_seed(s, a), __file__,
               label=f"profile {a.profile}", what="make_dataset + train_seed compute",
               figures="policies")


if __name__ == "__main__":
    main()
