"""auto_refine: the verdict seeds in one process (as the train stage runs them,
stages.common.seeds.run_seeds) against one process per seed (what a DVC matrix stage over seeds
would run), on calibration seeds only (>= 1000).

    nice -n 10 python benchmarks/auto_refine/seeds.py [--seeds 1000,1001,1002,1003,1004] [--profile default]

Each seed's work is the study's own: refine.make_data (its knowledge base), build_env (BM25 over
its documents) and train_arms (the three arms, ``reps`` replications, each with its held-out
learning curve). The policy is a tiny MLP scoring a variable number of candidates per decision,
and every seed has its own knowledge base, BM25 index and candidate sets, so the episodes of
different seeds do not share a tensor shape: a seed dimension in the tensors (stack_modules)
would pad every decision to the largest seed's and gains little on a 32-unit MLP; "batched" here
is every seed in one process (imports and process start paid once). The script prints wall and
CPU seconds of both ways and their ratio, and checks that every seed's weights come out the same
bit for bit either way (a seed's figures depend on that seed alone).
``--smoke``: the smoke profile and two seeds, in seconds (what CI runs).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import (  # noqa: E402
    add_one_seed_args, parse_seeds, seed_parser, seeds_main, study_params)


def one_seed(seed: int, a) -> dict:
    """make_data + build_env + train_arms of one seed: every run's weights as numpy arrays."""
    from stages.auto_refine.params import PARAMS
    from stages.auto_refine.refine import build_env, make_data, train_arms

    p = study_params("auto_refine", PARAMS, a)
    pp = p.prepare
    docs, train_q, test_q = make_data(pp.n_people, pp.n_cities, pp.n_distractors, pp.test_frac, seed)
    env = build_env(docs, p.train.k, train_q + test_q)
    runs = train_arms(env, train_q, test_q, p.train, seed)
    return {f"{arm}/{r}/{w}": t.numpy() for arm, rs in runs.items() for r, (pol, _, _) in enumerate(rs)
            for w, t in pol.state_dict().items()}


def main() -> None:
    ap = add_one_seed_args(seed_parser(__doc__))
    a, seeds = parse_seeds(ap)
    from stages.common.device import limit_threads

    limit_threads(1)
    seeds_main(a, seeds, lambda s: one_seed(s, a), __file__,
               label=f"profile {a.profile}", what="make_data + build_env + train_arms compute",
               figures="weights")


if __name__ == "__main__":
    main()
