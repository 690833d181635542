"""Seeds as an axis (docs/VERDICTS.md, section 1), at a tiny size (4 participants x 30 s): a verdict
seed's figures depend on that seed only (seed 1 alone and seed 1 after seed 0 give the same
measures and accuracies), the seed is used (seeds 0 and 1 differ), and every claim not retired
reads its metric, control and context from each seed's figures."""
from __future__ import annotations

import numpy as np
import pytest

from stages.common.runtime.params import load_study
from stages.common.seeds import per_seed_metrics
from stages.rppg_cogload.evaluate import seed_figures
from stages.rppg_cogload.params import PARAMS
from stages.rppg_cogload.prepare import seed_measures
from stages.rppg_cogload.paths import seed_slice
from stages.rppg_cogload.train import seed_accuracies
from tests.helpers import assert_claims_read_every_seed


@pytest.fixture(scope="module")
def tiny():
    _, p = load_study("rppg_cogload", PARAMS, profile="default")
    return p.model_copy(update={
        "prepare": p.prepare.model_copy(update={"participants": 4, "duration_s": 30}),
        "train": p.train.model_copy(update={"rf_trees": 5, "permutations": 1})})


@pytest.fixture(scope="module")
def runs(tiny):
    alone = seed_measures(tiny, 1)[0]
    after = {s: seed_measures(tiny, s)[0] for s in (0, 1)}          # seed 1 after seed 0, no reseeding
    return alone, after


def same(a: dict, b: dict) -> bool:
    return sorted(a) == sorted(b) and all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)


def test_a_seeds_measures_depend_on_that_seed_only(runs):
    alone, after = runs
    assert same(alone, after[1])
    assert not same(after[0], after[1])                                 # the seed is used
    assert not np.array_equal(after[0]["main/gt_hr"], after[1]["main/gt_hr"])


def test_a_seeds_accuracies_depend_on_that_seed_only(tiny, runs):
    alone, after = runs
    a1 = seed_accuracies(alone, tiny.train, 1)
    seed_accuracies(after[0], tiny.train, 0)
    assert seed_accuracies(after[1], tiny.train, 1) == a1


def test_every_claim_reads_every_seed(tiny, runs):
    _, after = runs
    figs = {s: seed_figures(after[s], seed_accuracies(after[s], tiny.train, s)) for s in (0, 1)}
    m = per_seed_metrics(figs)
    assert m["seeds"] == [0, 1] and set(m["per_seed"]) == {"0", "1"}
    assert m["claim"]["fusion_over_best_camera"] == pytest.approx(
        np.mean([figs[s]["claim"]["fusion_over_best_camera"] for s in (0, 1)]))
    assert_claims_read_every_seed("rppg_cogload", m, [0, 1])


def test_seed_slice_names_a_missing_seed():
    with pytest.raises(KeyError, match=r"seed 7 is not in data/rppg_cogload/measures.npz \(seeds there: \['s0'\]\)"):
        seed_slice({"s0/label": np.zeros(2)}, 7)
