"""webdancer: the verdict seeds in one process (as the stages run them) vs one process per seed.

    nice -n 10 python benchmarks/webdancer/seeds.py [--seeds 1000,1001,...] [--profile default]
    --smoke: the smoke profile's sizes and two seeds, in seconds (what CI runs).

Each seed trains a 17k-parameter transformer by SFT and then by RL whose rollouts step numpy
websites question by question; the RL loop is sequential in the iterations and its episodes end
at different steps, so the seeds are not given a tensor dimension: "batched" here means what the
stages do, every seed in one process one after another (stages.common.seeds.run_seeds: process
start and imports of torch paid once), against one process per seed (what a DVC matrix stage
over seeds would run). Both run prepare.build and train.train_seed for each seed; the script
prints wall and CPU seconds of both, their ratio, and checks that every seed's trained SFT+RL
weights are the same bit for bit either way (a seed's figures depend on that seed alone).
Calibration seeds only (>= 1000): never a verdict seed.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import (  # noqa: E402
    add_one_seed_args, parse_seeds, seed_parser, seeds_main)


def one_seed(seed: int, profile: str) -> dict:
    """prepare + train of one seed: the SFT+RL agent's weights as numpy arrays."""
    import argparse

    from benchmarks.common.calibration import study_params
    from stages.common.device import limit_threads
    from stages.webdancer.agent import split_data
    from stages.webdancer.params import PARAMS
    from stages.webdancer.prepare import build
    from stages.webdancer.train import train_seed
    from stages.webdancer.web import Layout

    limit_threads(1)
    p = study_params("webdancer", PARAMS, argparse.Namespace(profile=profile))
    lay = Layout(p.env.k, p.env.depth, p.env.n_topics, p.env.n_values)
    data = build(p.env, p.prepare, seed)
    data.pop("_info")
    sites, qs, traj = split_data(data)
    pols, _, _ = train_seed(lay, p.env, p.train, sites, qs, traj, seed)
    return {k: t.numpy() for k, t in pols["sft_rl"].state_dict().items()}


def main() -> None:
    ap = add_one_seed_args(seed_parser(__doc__))
    a, seeds = parse_seeds(ap)
    seeds_main(a, seeds, lambda s: one_seed(s, a.profile), __file__,
               label=f"profile {a.profile}", what="prepare + train compute",
               figures="SFT+RL weights")


if __name__ == "__main__":
    main()
