"""dima: the verdict seeds in one process (as the stages run them, stages.common.seeds.run_seeds)
against one process per seed (what a DVC matrix stage over seeds would run), on calibration seeds
only (>= 1000).

    nice -n 10 python benchmarks/dima/seeds.py [--seeds 1000,1001,1002,1003,1004] [--profile default]

Each seed's work is the study's own: prepare.collect_seed (behaviour episodes) and
train.train_seed (the seven world models, early-stopped). The models are small MLPs (10k
parameters) trained with early stopping, so each seed's model stops at its own step: a seed
dimension in the tensors (stack_modules) would have to run every seed to the longest one and
keep per-seed best weights, and the CEM planner and the env are numpy/pettingzoo loops; so
"batched" here is every seed in one process (imports and process start paid once). The script
prints wall and CPU seconds of both ways and their ratio, and checks that every seed's weights
come out the same bit for bit either way (a seed's figures depend on that seed alone).
``--smoke``: the smoke profile and two seeds, in seconds (what CI runs).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import (  # noqa: E402
    add_one_seed_args, parse_seeds, seed_parser, seeds_main, study_params)


def one_seed(seed: int, a) -> dict:
    """collect + train of one seed: its models' weights as numpy arrays."""
    from stages.dima.params import PARAMS
    from stages.dima.paths import seed_key
    from stages.dima.prepare import collect_seed
    from stages.dima.train import train_seed

    p = study_params("dima", PARAMS, a)
    arrays, _ = collect_seed(p.prepare, seed)
    npz = _Npz({seed_key(seed, k): v for k, v in arrays.items()})
    states, _, _ = train_seed(npz, seed, p.train, p.prepare)
    return {f"{k}/{w}": t.numpy() for k, sd in states.items() for w, t in sd.items()}


class _Npz:
    def __init__(self, d: dict):
        self._d, self.files = d, list(d)

    def __getitem__(self, k):
        return self._d[k]


def main() -> None:
    ap = add_one_seed_args(seed_parser(__doc__))
    a, seeds = parse_seeds(ap)
    from stages.common.device import limit_threads

    limit_threads(1)
    seeds_main(a, seeds, lambda s: one_seed(s, a), __file__,
               label=f"profile {a.profile}", what="collect + train compute", figures="weights")


if __name__ == "__main__":
    main()
