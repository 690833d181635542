"""Tail statistics against scipy and closed forms; evaluate's analysis on a synthetic sweep
whose tails are known exactly."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from stages.common.fits import loglog_slope
from stages.ensemble_tail.evaluate import analyse
from stages.ensemble_tail.params import EvaluateParams
from stages.ensemble_tail.tails import bootstrap_slopes, clopper_pearson, fit_line


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


def test_bootstrap_slopes_centre_on_the_slope():
    x = np.array([25.0, 50, 100, 200])
    R = 100_000
    counts = np.round(R * 0.5 * np.exp(-0.01 * x)).astype(int)
    d = bootstrap_slopes(np.random.default_rng(0), x, counts, R, 2000)
    assert np.median(d) == pytest.approx(-0.01, rel=0.02)


def test_analyse_on_a_known_sweep():
    n = [25, 50, 100, 200, 400, 800]
    R = 10**6
    base = [int(R * 0.9 * v ** -0.3) for v in n]                  # polynomial
    vote = [int(R * 0.5 * np.exp(-0.02 * v)) for v in n]           # exponential; few events at large n
    res = {"n_grid": n, "replications": R, "threshold": 0.1, "methods": ["base", "move", "rove", "bagging"],
           "counts": {"base": base, "move": vote, "rove": vote, "bagging": [R // 2] * 6},
           "mean_excess": {m: [0.0] * 6 for m in ("base", "move", "rove", "bagging")}}
    p = EvaluateParams(min_events=10, compare_n=200, n_boot=200, ci_level=0.95)
    out = analyse(res, p, np.random.default_rng(0))
    b, v = out["base"], out["move"]
    assert b["loglog"]["slope"] == pytest.approx(-0.3, abs=1e-3) and b["r2_loglog_minus_loglin"] > 0
    assert v["fit_n"] == [25, 50, 100, 200, 400]                   # 800: 0.5e6 exp(-16) = 0.06 events
    assert v["loglin"]["slope"] == pytest.approx(-0.02, rel=1e-3)
    assert v["slope_ratio"] == pytest.approx(-0.02 / b["loglin"]["slope"], rel=1e-3)
    assert v["upper_over_base_at_compare_n"] == pytest.approx(v["ci_high"][3] / b["rate"][3])
    assert out["bagging"]["last_minus_first"] == 0
