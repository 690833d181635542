"""dyna_rend: the verdict seeds in one process (as the stages run them) vs one process per seed.

    nice -n 10 python benchmarks/dyna_rend/seeds.py [--seeds 1000,1001,...] [--profile default] [--set key=JSON]
    --smoke: the smoke profile's sizes and two seeds, in seconds (what CI runs).

The train stage runs its seeds one after another in one process (stages.common.seeds.run_seeds):
the imports, the process start and torch's first calls are paid once. A seed dimension in the
tensors (torch.vmap over stacked weights) was not built: the renderer and the back-projection are
per-camera loops of small ops, and a seed of the default profile is about 100 s of CPU, so the
fixed cost a process pays is small beside it (this script measures how small). Both ways run the
study's own functions (calibration.run_seed: prepare.splits, train.train_seed,
evaluate.seed_figures) for each seed; the script prints wall and CPU seconds of both, their ratio,
and checks that every seed's figures are the same either way (a seed's figures depend on that
seed alone). Calibration seeds only (>= 1000): never a verdict seed.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import (  # noqa: E402
    add_one_seed_args, parse_seeds, seed_parser, seeds_main, study_params)


def main() -> None:
    ap = add_one_seed_args(seed_parser(__doc__, sets=True))
    a, seeds = parse_seeds(ap)

    from benchmarks.dyna_rend.calibration import run_seed
    from stages.common.device import limit_threads
    from stages.dyna_rend.params import PARAMS

    limit_threads(1)
    p = study_params("dyna_rend", PARAMS, a)
    seeds_main(a, seeds, lambda s: run_seed(p, s), __file__,
               label=f"profile {a.profile}", what="prepare + train + evaluate compute per seed",
               note="imports already paid by this process")


if __name__ == "__main__":
    main()
