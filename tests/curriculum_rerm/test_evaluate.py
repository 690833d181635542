"""Evaluation arithmetic on hand-made results: win fractions over the lambda sweep, each arm at its
best lambda, the paired t-interval (against scipy.stats.ttest_1samp's confidence interval), the
total-data ratio, and the per-seed layout the ledger reads."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from stages.common.seeds import per_seed_metrics
from stages.curriculum_rerm.evaluate import (DIGIT_ARMS, digits_metrics, paired_interval, ridge_metrics, seed_metrics,
                                             seed_slices, sgd_metrics)
from stages.curriculum_rerm.rerm import RIDGE_ARMS, SGD_ARMS
from stages.curriculum_rerm.train import largest_step


def test_paired_interval_matches_scipy_ttest_ci():
    d = np.array([-0.03, -0.01, -0.025, 0.005, -0.02, -0.04])
    got = paired_interval(d, 0.95)
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert got["ci_low"] == pytest.approx(ci.low) and got["ci_high"] == pytest.approx(ci.high)
    assert got["mean"] == pytest.approx(d.mean()) and got["negative"] == 5


def _ridge_res():
    # 4 replications, 2 lambdas: good beats direct in 4/4 at lambda 0 and 3/4 at lambda 1
    good = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 5.0], [1.0, 1.0]])
    direct = np.full((4, 2), 2.0)
    viol = np.array([[3.0, 2.0], [3.0, 1.0], [3.0, 3.0], [3.0, 3.0]])   # ties count as "not better"
    total = np.array([[0.5, 0.6], [0.5, 0.6], [0.5, 0.6], [2.0, 0.6]])
    return {"ridge.lambdas": np.array([0.1, 1.0]), "ridge.good": good, "ridge.direct": direct,
            "ridge.violating": viol, "ridge.direct_total": total, "ridge.reversed": good + 0.5,
            "ridge.pooled": np.array([[4.0, 0.9]] * 4),
            "ridge.r_good": np.array([1.0, 2.0, 1.5, 1.0]), "ridge.r_violating": np.ones(4),
            "ridge.r_reversed": np.full(4, 3.0)}


def test_ridge_metrics_minimum_over_the_sweep_and_each_arms_best_lambda():
    m = ridge_metrics(_ridge_res())
    assert m["good_beats_direct_frac"] == [1.0, 0.75] and m["good_beats_direct_frac_min"] == 0.75
    assert m["violating_not_better_frac"] == [1.0, 0.75] and m["violating_not_better_frac_min"] == 0.75
    assert m["best_lambda"]["good"] == 0.1 and m["best"]["direct_total"] == pytest.approx(0.6)
    assert m["best_lambda"]["pooled"] == 1.0 and m["best"]["pooled"] == pytest.approx(0.9)
    assert m["best"]["violating"] == pytest.approx(2.25) and m["best_lambda"]["violating"] == 1.0
    assert m["total_data"]["good_over_direct_total"] == pytest.approx(1.0 / 0.6)
    assert m["total_data"]["direct_total_wins_frac"] == 1.0
    assert m["r"] == {"good_max": 2.0, "reversed_max": 3.0, "violating_mean": 1.0}


def test_sgd_and_digits_metrics():
    res = {f"sgd.{a}": np.array([1.0, 2.0]) * (k + 1) for k, a in enumerate(SGD_ARMS)}
    res.update({f"sgd.closed_form.{a}": np.array([1.0, 2.0]) * (k + 1) for k, a in enumerate(SGD_ARMS)})
    m = sgd_metrics(res)
    assert m["good_beats_direct_frac"] == 1.0 and m["rel_gap_to_closed_form"]["good"] == 0.0
    dres = {f"digits.{a}": np.array([0.3, 0.3, 0.3]) for a in DIGIT_ARMS}
    dres["digits.good"] = np.array([0.2, 0.3, 0.25])
    dres["digits.direct"] = np.array([0.3, 0.31, 0.3])
    dres["digits.pooled"] = np.array([0.2, 0.2, 0.2])
    dm = digits_metrics(dres, 0.95)
    assert dm["good_minus_direct"]["mean"] == pytest.approx(-0.16 / 3) and dm["good_minus_direct"]["negative"] == 3
    assert dm["good_minus_pooled"]["mean"] == pytest.approx(0.15 / 3) and dm["replications"] == 3
    assert dm["mean_error"]["pooled"] == pytest.approx(0.2)


def test_largest_step_counts_the_first_step_from_zero():
    optima = np.array([[[3.0, 4.0], [3.0, 5.0]]])                      # steps 5 (from 0) and 1
    assert largest_step(optima).tolist() == [5.0]


def _stacked(seeds, rng):
    """A results file as train writes it: every key stacked over the seeds."""
    R, L = 4, 2
    res = {"seeds": np.array(seeds), "ridge.lambdas": np.array([0.1, 1.0])}
    for a in RIDGE_ARMS:
        res[f"ridge.{a}"] = rng.uniform(1, 10, (len(seeds), R, L))
    for a in ("good", "violating", "reversed"):
        res[f"ridge.r_{a}"] = rng.uniform(1, 3, (len(seeds), R))
    for a in SGD_ARMS:
        res[f"sgd.{a}"] = rng.uniform(1, 10, (len(seeds), R))
        res[f"sgd.closed_form.{a}"] = rng.uniform(1, 10, (len(seeds), R))
    for a in DIGIT_ARMS:
        res[f"digits.{a}"] = rng.uniform(0.1, 0.5, (len(seeds), R))
    return res


def test_per_seed_layout_each_seed_from_its_own_slice():
    res = _stacked([3, 7], np.random.default_rng(0))
    per = {s: seed_metrics(r, 0.95) for s, r in seed_slices(res).items()}
    m = per_seed_metrics(per)
    assert m["seeds"] == [3, 7] and set(m["per_seed"]) == {"3", "7"}
    # seed 7's figure is computed from row 1 of the stacked arrays only
    assert m["per_seed"]["7"]["digits"]["mean_error"]["good"] == pytest.approx(res["digits.good"][1].mean())
    alone = ridge_metrics({k: (v if k == "ridge.lambdas" else v[1]) for k, v in res.items() if k != "seeds"})
    assert m["per_seed"]["7"]["ridge"]["best"] == alone["best"]
    # the top level is the mean over the seeds
    assert m["ridge"]["best"]["good"] == pytest.approx(
        (per[3]["ridge"]["best"]["good"] + per[7]["ridge"]["best"]["good"]) / 2)
