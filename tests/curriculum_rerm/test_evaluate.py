"""Evaluation arithmetic on hand-made results: win fractions over the lambda sweep, the paired
t-interval (against scipy.stats.ttest_1samp's confidence interval), the total-data ratio."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from stages.curriculum_rerm.evaluate import digits_metrics, paired_interval, ridge_metrics, sgd_metrics
from stages.curriculum_rerm.train import largest_step


def test_paired_interval_matches_scipy_ttest_ci():
    d = np.array([-0.03, -0.01, -0.025, 0.005, -0.02, -0.04])
    got = paired_interval(d, 0.95)
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert got["ci_low"] == pytest.approx(ci.low) and got["ci_high"] == pytest.approx(ci.high)
    assert got["mean"] == pytest.approx(d.mean()) and got["negative"] == 5


def test_ridge_metrics_minimum_over_the_sweep():
    # 4 seeds, 2 lambdas: good beats direct in 4/4 at lambda 0 and 3/4 at lambda 1
    good = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 5.0], [1.0, 1.0]])
    direct = np.full((4, 2), 2.0)
    viol = np.array([[3.0, 2.0], [3.0, 1.0], [3.0, 3.0], [3.0, 3.0]])   # ties count as "not better"
    total = np.array([[0.5, 0.6], [0.5, 0.6], [0.5, 0.6], [2.0, 0.6]])
    res = {"ridge.lambdas": np.array([0.1, 1.0]), "ridge.good": good, "ridge.direct": direct,
           "ridge.violating": viol, "ridge.direct_total": total,
           "ridge.r_good": np.array([1.0, 2.0, 1.5, 1.0]), "ridge.r_violating": np.ones(4)}
    m = ridge_metrics(res)
    assert m["good_beats_direct_frac"] == [1.0, 0.75] and m["good_beats_direct_frac_min"] == 0.75
    assert m["violating_not_better_frac"] == [1.0, 0.75] and m["violating_not_better_frac_min"] == 0.75
    assert m["best_lambda"]["good"] == 0.1 and m["best"]["direct_total"] == pytest.approx(0.6)
    assert m["total_data"]["good_over_direct_total"] == pytest.approx(1.0 / 0.6)
    assert m["total_data"]["direct_total_wins_frac"] == 1.0 and m["r_good_max"] == 2.0


def test_sgd_and_digits_metrics():
    arms = ("good", "violating", "direct", "direct_total")
    res = {f"sgd.{a}": np.array([1.0, 2.0]) * (k + 1) for k, a in enumerate(arms)}
    res.update({f"sgd.closed_form.{a}": np.array([1.0, 2.0]) * (k + 1) for k, a in enumerate(arms)})
    m = sgd_metrics(res)
    assert m["good_beats_direct_frac"] == 1.0 and m["rel_gap_to_closed_form"]["good"] == 0.0
    dres = {"digits.good": np.array([0.2, 0.3, 0.25]), "digits.direct": np.array([0.3, 0.31, 0.3]),
            "digits.violating": np.array([0.4, 0.4, 0.4]), "digits.direct_total": np.array([0.2, 0.2, 0.2]),
            "digits.direct_long": np.array([0.3, 0.3, 0.3])}
    dm = digits_metrics(dres, 0.95)
    assert dm["good_minus_direct"]["mean"] == pytest.approx(-0.16 / 3) and dm["good_minus_direct"]["negative"] == 3


def test_largest_step_counts_the_first_step_from_zero():
    optima = np.array([[[3.0, 4.0], [3.0, 5.0]]])                      # steps 5 (from 0) and 1
    assert largest_step(optima).tolist() == [5.0]
