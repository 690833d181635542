"""labyrinth: the verdict seeds in one process (as the stages run them) vs one process per seed.

    nice -n 10 python benchmarks/labyrinth/seeds.py [--seeds 1000,1001,...] [--profile default]
    --smoke: the smoke profile's sizes and two seeds, in seconds (what CI runs).

Each seed is one independent repetition with its own mazes, so its own number of demonstrations
(1,100-1,300 state-action pairs at default) and of minibatches per epoch, and DAgger's aggregate
depends on that seed's own rollouts: a seed dimension in the tensors would need per-seed masked
minibatches and masked Adam steps and would no longer give a seed the figures it gets alone. So
"batched" here is what the stages do, every seed in one process one after another
(stages.common.seeds.run_seeds: interpreter start and imports paid once), against one process per
seed (what a DVC matrix stage over seeds would run). Both run prepare.build, train.train_seed and
evaluate.evaluate_seed for each seed; the script prints wall and CPU seconds of both, their ratio,
and checks that every seed's figures are the same either way (a seed's figures depend on that
seed alone). Calibration seeds only (>= 1000): never a verdict seed.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import (  # noqa: E402
    add_one_seed_args, parse_seeds, seed_parser, seeds_main)


def one_seed(seed: int, profile: str) -> dict:
    """prepare + train + evaluate compute of one seed: its figures (metrics.json's per-seed entry)."""
    import torch

    from stages.common.runtime.params import load_study
    from stages.common.seeding import seed_everything
    from stages.labyrinth.evaluate import evaluate_seed
    from stages.labyrinth.params import PARAMS
    from stages.labyrinth.prepare import build
    from stages.labyrinth.train import train_seed

    torch.set_num_threads(1)
    seed_everything(seed)
    _, p = load_study("labyrinth", PARAMS, profile=profile)
    mazes = build(p.prepare, seed)
    nets, _ = train_seed(mazes, p.train, p.prepare.view_radius, seed)
    return evaluate_seed(mazes, {k: v[0] for k, v in nets.items()}, p.train, p.prepare)


def main() -> None:
    ap = add_one_seed_args(seed_parser(__doc__))
    a, seeds = parse_seeds(ap)
    seeds_main(a, seeds, lambda s: one_seed(s, a.profile), __file__,
               label=f"profile {a.profile}", what="prepare + train + evaluate compute",
               note="imports paid once")


if __name__ == "__main__":
    main()
