"""ensemble_tail under the claims contract v2: every verdict seed is its own repetition of the
sweep (a seed's figures depend on that seed only), the tuned bagging-average (the musts' control)
against what it must equal, and the evaluate stage's per-seed layout."""
from __future__ import annotations

import json

import numpy as np
import pytest

from stages.ensemble_tail import ensemble as E
from stages.ensemble_tail import problems as P
from stages.ensemble_tail.evaluate import analyse_seeds
from stages.ensemble_tail.params import EvaluateParams, TrainParams

SMALL = {
    "lp": {"costs": [0.0, 0.6, 0.6, 1.2, 1.2], "tail_index": 1.5, "threshold": 0.1},
    "regression": {"enabled": True, "dim": 3, "sq_dists": [0.0, 0.2, 0.2, 0.4, 0.4], "tail_index": 2.1,
                   "threshold": 0.1, "n_grid": [25, 50], "replications": 40},
    "n_grid": [25, 40, 60], "replications": 60, "chunk": 25,
    "ensembles": {"k": 10, "B": 15, "k1": 10, "k2": 10, "B1": 15, "B2": 15, "auto_epsilon_prob": 0.5,
                  "roves": True, "bag_fraction": 0.5, "bag_B": 8},
}


@pytest.fixture(scope="module")
def runs():
    from stages.ensemble_tail.train import run_seed

    p = TrainParams.model_validate(SMALL)
    return {s: run_seed(p, s)[0] for s in (0, 1)}, p


def test_each_seed_depends_on_its_seed_only(runs):
    from stages.ensemble_tail.train import run_seed

    both, p = runs
    again = run_seed(p, 1)[0]
    assert again == both[1]                                          # determinism, and no shared state
    assert both[0]["lp"]["counts"] != both[1]["lp"]["counts"]         # the seed enters the draws
    ev = EvaluateParams(min_events=3, compare_n=40, n_boot=100, ci_level=0.95)
    pair = analyse_seeds({"per_seed": {"0": both[0], "1": both[1]}}, ev)
    alone = analyse_seeds({"per_seed": {"1": both[1]}}, ev)
    same = json.dumps(pair[1], sort_keys=True) == json.dumps(alone[1], sort_keys=True)   # NaN == NaN here
    assert same                                                      # seed 1's figures, bootstrap included


def test_sweep_counts_every_arm(runs):
    both, p = runs
    lp = both[0]["lp"]
    assert lp["methods"] == ["base", "move", "rove", "roves", "bagging", "bagged"]
    assert lp["bag_k"] == {"bagged": [12, 20, 30]}                   # round(0.5 n), at least k = 10
    for m in lp["methods"]:
        assert len(lp["counts"][m]) == 3 and all(0 <= c <= 60 for c in lp["counts"][m])


def test_uniform_subsets_distinct_and_uniform():
    rng = np.random.default_rng(3)
    idx = E.uniform_subsets(rng, 12, 5, 40_000)
    assert idx.shape == (40_000, 5)
    assert all(len(set(r)) == 5 for r in idx[:500])
    freq = np.bincount(idx.ravel(), minlength=12) / 40_000
    assert np.allclose(freq, 5 / 12, atol=0.01)                      # inclusion probability k/n
    assert (np.sort(E.uniform_subsets(rng, 7, 7, 3), axis=1) == np.arange(7)).all()
    with pytest.raises(ValueError, match="subsample size k=8 must be in"):
        E.uniform_subsets(rng, 7, 8, 1)


def test_bag_size():
    assert [E.bag_size(n, 0.5, 10) for n in (12, 25, 200)] == [10, 12, 100]
    assert E.bag_size(25, 1.0, 10) == 25 and E.bag_size(15, 0.1, 20) == 15


def test_tuned_bagging_with_whole_samples_is_the_base():
    """Subsamples of size n are the whole sample: the average puts weight 1 on SAA's vertex."""
    rng = np.random.default_rng(5)
    costs = P.lp_costs(rng, np.array([0.0, 0.6, 0.6, 1.2, 1.2]), 1.5, 30, 20)
    w = E.bagging_tuned(costs, rng, 20, 7, chunk=3)
    assert np.array_equal(w, np.eye(5)[E.saa(costs)])


def test_tuned_bagging_is_the_vote_frequencies_of_its_subsamples():
    """Against a plain loop: each subsample's SAA vertex, counted, divided by B."""
    costs = P.lp_costs(np.random.default_rng(6), np.array([0.0, 0.6, 0.6, 1.2, 1.2]), 1.5, 4, 30)
    w = E.bagging_tuned(costs, np.random.default_rng(7), 12, 9, chunk=4)
    rng = np.random.default_rng(7)
    counts = np.zeros((4, 5))
    for b0 in range(0, 9, 4):
        b = min(4, 9 - b0)
        idx = E.uniform_subsets(rng, 30, 12, 4 * b).reshape(4, b, 12)
        for r in range(4):
            for j in range(b):
                counts[r, costs[r, idx[r, j]].sum(axis=0).argmin()] += 1
    assert np.allclose(w, counts / 9)
