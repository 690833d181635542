"""hephaestus_qosd: the verdict seeds in one process (as the stages run them) vs one process per seed.

    nice -n 10 python -m benchmarks.hephaestus_qosd.seeds [--seeds 1000,1001,...] [--profile default]
    --smoke: the smoke profile's sizes and two seeds, in seconds (what CI runs).

The study's compute is Dijkstra-bound Python (path stressing, its repairs, the local searches)
around a mixture CVAE of a few thousand weights; the graphs, the labels and the Refine draws of a
seed differ from another seed's, so there is no common tensor to give a seed dimension but the
CVAE's fit (a few per cent of a seed's CPU). "Batched" here means what the stages do: every seed
in one process, one after another (stages.common.seeds.run_seeds: interpreter start and imports
of torch, scipy, networkx and highspy paid once), against one process per seed (what a DVC
matrix stage over seeds would run). Both run prepare.seed_graphs, train.train_seed and
evaluate.evaluate_seed for each seed; the script prints wall and CPU seconds of both, their
ratio, and checks that every seed's costs are the same bit for bit either way (a seed's figures
depend on that seed alone). Calibration seeds only (>= 1000): never a verdict seed.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import (  # noqa: E402
    add_one_seed_args, parse_seeds, seed_parser, seeds_main)


def one_seed(seed: int, profile: str) -> dict:
    """prepare + train + evaluate compute of one seed: its cost of every method and instance, and
    its CVAE's final loss, as arrays."""
    import numpy as np

    from stages.common.runtime.params import load_study
    from stages.hephaestus_qosd.cvae import initial_model
    from stages.hephaestus_qosd.evaluate import evaluate_seed
    from stages.hephaestus_qosd.params import PARAMS
    from stages.hephaestus_qosd.prepare import seed_graphs
    from stages.hephaestus_qosd.train import train_seed

    _, p = load_study("hephaestus_qosd", PARAMS, profile=profile)
    g = seed_graphs(p.prepare, seed)
    tr = train_seed(g["train"], p.prepare.costs, p.train, p.forge, seed, progress=False)
    rows, _ = evaluate_seed(g["test"], p.prepare.costs, tr["model"], initial_model(p.train, seed).eval(),
                            p.evaluate, p.forge, seed)
    return {"cost": np.array([r["cost_value"] for r in rows]), "losses": np.array(tr["losses"])}


def main() -> None:
    ap = add_one_seed_args(seed_parser(__doc__))
    a, seeds = parse_seeds(ap)
    from stages.common.device import limit_threads

    limit_threads(1)
    seeds_main(a, seeds, lambda s: one_seed(s, a.profile), __file__,
               label=f"profile {a.profile}", what="prepare + train + evaluate compute",
               figures="costs and CVAE losses")


if __name__ == "__main__":
    main()
