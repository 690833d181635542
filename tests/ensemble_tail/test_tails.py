"""Tail statistics against scipy and closed forms; the BCa slope intervals against scipy and
against the binomial percentile bootstrap they replaced; evaluate's analysis on a synthetic sweep
whose tails are known exactly."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.stats import binomtest

from stages.common.fits import loglog_slope
from stages.ensemble_tail.evaluate import analyse
from stages.ensemble_tail.params import EvaluateParams
from stages.ensemble_tail.tails import BATCH, clopper_pearson, fit_line, slope_interval, slope_ratio_interval


@pytest.mark.parametrize("k,n", [(0, 2000), (1, 2000), (7, 2000), (469, 2000), (2000, 2000), (3, 10)])
def test_clopper_pearson_matches_scipy_binomtest(k, n):
    lo, hi = clopper_pearson(k, n, 0.95)
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert float(lo) == pytest.approx(ci.low, abs=1e-12) and float(hi) == pytest.approx(ci.high, abs=1e-12)


def test_fit_line_exact_and_same_slope_as_common_loglog():
    x = np.array([25.0, 50, 100, 200, 400])
    y = 3.0 * x ** -0.4
    f = fit_line(np.log(x), np.log(y))
    assert f["slope"] == pytest.approx(-0.4) and f["r2"] == pytest.approx(1.0)
    assert f["slope"] == pytest.approx(loglog_slope(x, y)[0])


def old_bootstrap_slopes(rng, x, counts, R, n_boot):
    """The hand-written binomial bootstrap tails.py used before scipy's BCa (reference copy)."""
    x = np.asarray(x, float)
    p = np.asarray(counts, float) / R
    draws = rng.binomial(R, p, size=(n_boot, p.size)).astype(float)
    logp = np.log(np.maximum(draws, 0.5) / R)
    xc = x - x.mean()
    return (logp - logp.mean(axis=1, keepdims=True)) @ xc / (xc @ xc)


def old_percentile_ci(draws, level):
    a = (1 - level) / 2
    return float(np.quantile(draws, a)), float(np.quantile(draws, 1 - a))


# the LP sweep's shape (default profile): R = 2000 replications at 11 sizes, the base's tail
# polynomial, a vote's exponential and fitted where it has >= 10 events
N = np.array([25, 35, 50, 71, 100, 141, 200, 283, 400, 566, 800], float)
R = 2000


def sweep(seed):
    g = np.random.default_rng(seed)
    base = g.binomial(R, 0.4 * (N / 25) ** -0.3)
    vote = g.binomial(R, 0.5 * np.exp(-0.025 * N))
    sel = vote >= 10
    return base, N[sel], vote[sel]


def test_slope_intervals_are_scipys_bca_over_the_replications():
    base, nv, vote = sweep(0)
    reps = [np.r_[np.ones(k), np.zeros(R - k)] for k in vote]

    def slope(*s, axis=-1):
        logp = np.stack([np.log(np.maximum(x.mean(axis=axis), 0.5 / x.shape[axis])) for x in s], axis=-1)
        return np.polyfit(nv, np.moveaxis(logp, -1, 0).reshape(len(nv), -1), 1)[0].reshape(logp.shape[:-1])

    ref = stats.bootstrap(tuple(reps), slope, n_resamples=500, confidence_level=0.9, method="BCa",
                          batch=BATCH, random_state=np.random.default_rng(3)).confidence_interval
    got = slope_interval(nv, vote, R, n_boot=500, level=0.9, seed=3)
    assert got == pytest.approx((ref.low, ref.high), rel=1e-9)


def test_slope_intervals_agree_with_the_old_binomial_percentile_bootstrap():
    """Resampling each n's replications redraws its count from Binomial(R, k / R), so the new
    percentile interval is the old one up to Monte-Carlo error (different random streams: each
    2.5 % quantile of 2000 resamples has a Monte-Carlo sd of about 0.06 sd of the slope, so
    0.3 sd is ample). BCa further moves each end by its bias and skew correction (z0 + a z^2 in
    normal units): on this shape about 0.15 sd for the base's slope and up to 0.55 sd for the
    vote's and the ratio (the vote's few events at large n make its log rate skewed), so BCa is
    held to 0.75 sd of the old bootstrap distribution."""
    base, nv, vote = sweep(0)
    rng = np.random.default_rng(0)
    d_lin = old_bootstrap_slopes(rng, N, base, R, 2000)
    d_v = old_bootstrap_slopes(rng, nv, vote, R, 2000)
    cases = [(d_lin, lambda m: slope_interval(N, base, R, n_boot=2000, level=0.95, seed=0, method=m)),
             (d_v, lambda m: slope_interval(nv, vote, R, n_boot=2000, level=0.95, seed=0, method=m)),
             (d_v / d_lin, lambda m: slope_ratio_interval(nv, vote, N, base, R, n_boot=2000, level=0.95, seed=0,
                                                          method=m))]
    for draws, new in cases:
        old, sd = old_percentile_ci(draws, 0.95), draws.std()
        pct, bca = new("percentile"), new("BCa")
        assert bca[0] < bca[1]                                     # BCa defined: not the point
        assert np.abs(np.subtract(pct, old)).max() <= 0.3 * sd
        assert np.abs(np.subtract(bca, old)).max() <= 0.75 * sd


def test_slope_interval_covers_the_slope():
    x = np.array([25.0, 50, 100, 200])
    counts = np.round(R * 0.5 * np.exp(-0.01 * x)).astype(int)
    lo, hi = slope_interval(x, counts, R, n_boot=1000, level=0.95, seed=0)
    assert lo < -0.01 < hi and hi - lo < 0.003


def test_analyse_on_a_known_sweep():
    """R = 2000 replications, the default profile's (the BCa intervals resample the replications
    themselves: n_boot x R values a size, and the jackknife R x R, so not 10**6 as before)."""
    n = [25, 50, 100, 200, 400, 800]
    R = 2000
    base = [int(R * 0.9 * v ** -0.3) for v in n]                  # polynomial
    vote = [int(R * 0.5 * np.exp(-0.02 * v)) for v in n]           # exponential; few events at large n
    res = {"n_grid": n, "replications": R, "threshold": 0.1, "methods": ["base", "move", "rove", "bagging"],
           "counts": {"base": base, "move": vote, "rove": vote, "bagging": [R // 2] * 6},
           "mean_excess": {m: [0.0] * 6 for m in ("base", "move", "rove", "bagging")}}
    p = EvaluateParams(min_events=10, compare_n=200, n_boot=200, ci_level=0.95)
    out = analyse(res, p, np.random.default_rng(0))
    b, v = out["base"], out["move"]
    assert b["loglog"]["slope"] == pytest.approx(-0.3, abs=1e-3) and b["r2_loglog_minus_loglin"] > 0
    assert v["fit_n"] == [25, 50, 100, 200]                        # 400: 1000 exp(-8) = 0.3 events
    assert v["loglin"]["slope"] == pytest.approx(-0.02, rel=1e-2)  # counts truncated to integers
    assert v["slope_ratio"] == pytest.approx(v["loglin"]["slope"] / b["loglin"]["slope"], rel=1e-12)
    for fit in (b["loglog"], b["loglin"], v["loglin"]):
        assert fit["ci_low"] < fit["slope"] < fit["ci_high"]
    assert v["slope_ratio_ci_low"] < v["slope_ratio"] < v["slope_ratio_ci_high"]
    assert v["upper_over_base_at_compare_n"] == pytest.approx(v["ci_high"][3] / b["rate"][3])
    assert out["bagging"]["last_minus_first"] == 0
    assert analyse(res, p, np.random.default_rng(0)) == out                 # one rng, the same intervals
