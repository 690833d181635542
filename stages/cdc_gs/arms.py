"""The four arms of cdc_gs and the fits a run makes of them: what the train stage fits and the
evaluate stage scores, in one place so that neither stage imports the other."""
from __future__ import annotations

# arm -> (policy, complexity map) (splat.FitJob)
ARMS = {"adc": ("adc", "wavelet"), "loss_map": ("cdc", "error"), "cdc": ("cdc", "wavelet"),
        "cdc_shuffled": ("cdc", "shuffled")}


def jobs(names: list[str], p, seeds: list[int]) -> list[tuple[int, str, str, int]]:
    """(seed, image, arm, count) of every fit."""
    return [(s, n, arm, c) for c in p.counts for n in names for s in seeds for arm in ARMS]
