"""stages.common.inference against closed forms, hand-worked cases and the libraries' own answers."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from stages.common.inference import (bootstrap_interval, judge, mean_interval, paired_effect,
                                     paired_permutation_p, t_interval, tost_p)


def test_t_interval_closed_forms():
    """df = 1: the t quantile is Cauchy's, tan(pi (p - 1/2)); df = 2: (2p - 1) / sqrt(2 p (1 - p))."""
    lo, hi = t_interval([0.0, 2.0])                    # mean 1, sd sqrt(2), se 1
    q1 = math.tan(math.pi * (0.95 - 0.5))              # 6.3137...
    assert (lo, hi) == pytest.approx((1 - q1, 1 + q1), rel=1e-12)
    lo, hi = t_interval([1.0, 2.0, 3.0])               # mean 2, sd 1, se 1/sqrt(3)
    q2 = (2 * 0.95 - 1) / math.sqrt(2 * 0.95 * 0.05)   # 2.91998...
    assert (lo, hi) == pytest.approx((2 - q2 / math.sqrt(3), 2 + q2 / math.sqrt(3)), rel=1e-12)
    assert t_interval([4.0, 4.0, 4.0]) == (4.0, 4.0)   # zero spread: the mean
    with pytest.raises(ValueError, match="at least 2 values"):
        t_interval([1.0])


def test_bootstrap_interval_is_scipys_bca():
    rng = np.random.default_rng(1000)
    x = rng.normal(size=12)
    got = bootstrap_interval(x, seed=3)
    ref = stats.bootstrap((x,), np.mean, confidence_level=0.90, method="BCa", n_resamples=9999,
                          random_state=np.random.default_rng(3)).confidence_interval
    assert got == pytest.approx((ref.low, ref.high), rel=1e-12)
    assert bootstrap_interval([2.0] * 9) == (2.0, 2.0)


def test_batching_bounds_memory_and_changes_nothing():
    x = np.random.default_rng(1004).normal(size=300)
    assert bootstrap_interval(x, n_resamples=2000) == bootstrap_interval(x, n_resamples=2000, batch=64)


def test_bootstrap_interval_of_a_large_normal_sample_is_the_normal_interval():
    """n = 4000 draws of N(0, 1): the 90 % interval of the mean is about +-1.645 / sqrt(n)."""
    x = np.random.default_rng(1001).normal(size=4000)
    lo, hi = bootstrap_interval(x, method="percentile", n_resamples=2000)
    half = stats.norm.ppf(0.95) / math.sqrt(len(x))
    assert (hi - lo) / 2 == pytest.approx(half, rel=0.1)
    assert lo < x.mean() < hi


def test_paired_bootstrap_resamples_pairs_together():
    """With B = A + 1 exactly, the paired mean difference has no spread: the interval is the point."""
    a = np.random.default_rng(1002).normal(size=10)
    assert bootstrap_interval((a, a + 1.0), lambda x, y, axis: np.mean(x - y, axis=axis),
                              paired=True) == pytest.approx((-1.0, -1.0))


def test_mean_interval_switches_to_bca_at_eight_seeds():
    assert mean_interval([1.0, 2.0, 4.0, 3.0, 5.0])[1] == "t"
    assert mean_interval(list(range(8)))[1] == "BCa"


def test_tost_agrees_with_the_t_interval_inside_the_bounds():
    """TOST at 5 % rejects non-equivalence exactly when the 90 % t-interval is inside [lo, hi]."""
    rng = np.random.default_rng(1003)
    agree = 0
    for _ in range(200):
        x = rng.normal(loc=rng.uniform(-1, 1), scale=rng.uniform(0.1, 1), size=5)
        lo, hi = t_interval(x)
        assert (tost_p(x, -1.0, 1.0) < 0.05) == (-1.0 < lo and hi < 1.0)
        agree += 1
    assert agree == 200


def test_paired_effect_by_hand():
    d_z = (2 / 3) / math.sqrt(7 / 3)                   # differences [1, 2, -1]
    got = paired_effect([1.0, 2.0, 3.0], [0.0, 0.0, 4.0])
    assert got["d_z"] == pytest.approx(d_z) and got["p_greater"] == pytest.approx(2 / 3)
    assert paired_effect([1.0, 1.0], [0.0, 0.0])["d_z"] is None       # zero spread


def test_paired_permutation_p_enumerates_the_sign_flips():
    """|d| = [1, 2, 1]: sums over the 8 sign assignments are 4, 2, 2, 0, 0, -2, -2, -4; the
    observed sum 2 is reached or passed by 3 of 8."""
    assert paired_permutation_p([1.0, 2.0, 3.0], [0.0, 0.0, 4.0]) == pytest.approx(3 / 8)


@pytest.mark.parametrize("values,op,thr,rule,want", [
    ([1.1, 1.2, 1.3, 1.2, 1.15], ">", 1.0, "interval", "holds"),
    ([0.1, 0.2, 0.3, 0.2, 0.15], ">", 1.0, "interval", "fails"),
    ([0.5, 1.5, 0.8, 1.4, 1.0], ">", 1.0, "interval", "inconclusive"),
    ([0.1, 0.2, 0.3, 0.2, 0.15], "<", 1.0, "interval", "holds"),
    ([0.45, 0.5, 0.55, 0.5, 0.5], "between", [0.3, 0.6], "interval", "holds"),
    ([0.45, 0.5, 0.55, 0.5, 0.5], "between", [0.3, 0.6], "equivalence", "holds"),
    ([0.9, 1.0, 1.1, 1.0, 1.0], "between", [0.3, 0.6], "interval", "fails"),
    ([0.3, 0.6, 0.9, 0.5, 0.7], "between", [0.3, 0.6], "interval", "inconclusive"),
    ([0.0, 0.0, 0.0], "<=", 0.0, "every_seed", "holds"),
    ([0.0, 0.0, 1.0], "<=", 0.0, "every_seed", "fails"),
    ([3.0, 3.0, 3.0], ">=", 3.0, "interval", "holds"),           # zero spread: the mean decides
    ([2.0], ">", 1.0, "interval", "holds"),                      # one value (a deterministic figure)
    ([1.0, None, 2.0], ">", 0.0, "interval", "not run"),
    ([1.0, float("nan")], ">", 0.0, "interval", "not run"),
    ([], ">", 0.0, "interval", "not run"),
])
def test_judge_rules(values, op, thr, rule, want):
    assert judge(values, op, thr, rule).verdict == want


def test_judge_reports_its_figures():
    j = judge([1.1, 1.2, 1.3, 1.2, 1.15], ">", 1.0)
    assert j.n == 5 and j.mean == pytest.approx(1.19) and j.method == "t" and j.passing == 5
    assert j.interval == pytest.approx(t_interval([1.1, 1.2, 1.3, 1.2, 1.15]))
    assert judge(list(np.linspace(0, 1, 10)), ">", -1).method == "BCa"
    assert judge([0.45, 0.5, 0.55], "between", [0.3, 0.6]).tost_p < 0.05


def test_judge_rejects_bad_rules():
    with pytest.raises(ValueError, match="unknown rule 'vote'"):
        judge([1.0, 2.0], ">", 0, "vote")
    with pytest.raises(ValueError, match="needs op 'between'"):
        judge([1.0, 2.0], ">", 0, "equivalence")
