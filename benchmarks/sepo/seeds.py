"""sepo seeds as an axis: the train stage runs every verdict seed one after another in ONE process
(stages.common.seeds.run_seeds: imports and the start paid once); this measures that against one
process per seed (what a DVC matrix stage over seeds would do), on calibration seeds only (>= 1000).

    nice -n 10 python benchmarks/sepo/seeds.py [--seeds 1000,1001] [--set train.sepo.steps=30]

Each way runs :func:`stages.sepo.runs.run_seed` for every seed (the profile's params, ``--set``
changes one). It prints the wall and CPU seconds of each way (children's CPU for the separate
processes), their ratio, and checks that every seed's curves are the same both ways.
Why no seed dimension in the tensors: each seed has its own data, model and sampled batches, and
most of a seed's time is the exact evaluation of its own model (390,625 partial sequences) and
its own SEPO steps; stacking five models would not cut that arithmetic.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import (  # noqa: E402
    add_one_seed_args, parse_seeds, seed_parser, seeds_main, study_params)


def one_seed(profile: str, sets: list[str], seed: int) -> dict:
    """run_seed for ``seed`` with the profile's params: its curves (what both ways must agree on)."""
    import argparse

    from stages.common.device import limit_threads
    from stages.common.seeding import seed_everything
    from stages.sepo.dd import all_sequences, motif_reward
    from stages.sepo.params import PARAMS
    from stages.sepo.prepare import seed_data
    from stages.sepo.runs import run_seed

    limit_threads(1)
    p = study_params("sepo", PARAMS, argparse.Namespace(profile=profile, set=sets))
    pp = p.prepare
    reward = lambda s: motif_reward(s, pp.motif, pp.partial_weight)  # noqa: E731
    seed_everything(seed)
    r = run_seed(seed_data(pp, seed)[0], pp.length, reward, reward(all_sequences(pp.length)), p.train, seed,
                 log=lambda _: None)
    return r["curves"]


def main() -> None:
    a, seeds = parse_seeds(add_one_seed_args(seed_parser(__doc__, sets=True)))
    seeds_main(a, seeds, lambda s: one_seed(a.profile, a.set, s), __file__,
               label=f"profile {a.profile}{' with ' + ', '.join(a.set) if a.set else ''}",
               what="run_seed compute", figures="curves")


if __name__ == "__main__":
    main()
