"""rppg_cogload: the verdict seeds in one process (as the stages run them) vs one process per seed.

    nice -n 10 python benchmarks/rppg_cogload/seeds.py [--seeds 1000,1001,...] [--profile default]
    --smoke: tiny sizes (4 participants x 30 s) and two seeds, in seconds (what CI runs).

The study's compute is per recording: neurokit2's simulators, scipy filters and periodograms of one
120-s trace, heartpy's peak detection, and small scikit-learn cross-validations. heartpy and
neurokit2 work on one signal at a time, so there is no tensor to give a seed dimension; "batched"
here means what the stages do, every seed in one process one after another
(stages.common.seeds.run_seeds: interpreter start and the imports of neurokit2, heartpy, scipy and
scikit-learn paid once), against one process per seed (what a DVC matrix stage over seeds would
run). Both run prepare.seed_measures and train.seed_accuracies for each seed; the script prints wall
and CPU seconds of both, their ratio, and checks that every seed's figures are the same either way
(a seed's figures depend on that seed alone). Calibration seeds only (>= 1000): never a verdict seed.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import (  # noqa: E402
    add_one_seed_args, forwarded, one_process_vs_one_per_seed, parse_seeds, seed_parser, write_one_seed)


def params(profile: str, smoke: bool):
    from stages.common.runtime.params import load_study
    from stages.rppg_cogload.params import PARAMS

    _, p = load_study("rppg_cogload", PARAMS, profile=profile)
    if smoke:        # smaller than the smoke profile: the script's path in seconds
        p = p.model_copy(update={"prepare": p.prepare.model_copy(update={"participants": 4, "duration_s": 30})})
    return p


def one_seed(seed: int, p) -> dict:
    """prepare + train compute of one seed: its accuracies and the sum of its measures."""
    import numpy as np

    from stages.rppg_cogload.prepare import seed_measures
    from stages.rppg_cogload.train import seed_accuracies

    m, _ = seed_measures(p, seed)
    return {"accuracy": seed_accuracies(m, p.train, seed),
            "measures": {k: float(np.nansum(v)) for k, v in sorted(m.items())}}


def main() -> None:
    ap = add_one_seed_args(seed_parser(__doc__))
    a, seeds = parse_seeds(ap)
    from stages.common.device import limit_threads

    limit_threads()
    p = params(a.profile, a.smoke)
    if a.one is not None:            # child: one seed, figures to --out
        write_one_seed(a, one_seed(a.one, p))
        return
    child = [sys.executable, "-W", "ignore", __file__, *forwarded(a), *(["--smoke"] if a.smoke else [])]
    one_process_vs_one_per_seed(seeds, lambda s: one_seed(s, p), child,
                                label=f"profile {a.profile}{' (smoke sizes)' if a.smoke else ''}",
                                what="prepare + train compute",
                                note="neurokit2, heartpy, scikit-learn imported once, here")


if __name__ == "__main__":
    main()
