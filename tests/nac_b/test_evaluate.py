"""nac_b evaluate's statistics: log-log slopes, their bootstrap interval over runs, ratios."""
from __future__ import annotations

import math

import numpy as np
import pytest

from stages.nac_b.evaluate import loglog_slope, ratio_with_ci, slope_with_ci


def test_loglog_slope_of_a_power_law_is_its_exponent():
    T = np.array([1e3, 1e4, 1e5])
    slope, icpt = loglog_slope(T, 3.0 * T ** 0.5)
    assert slope == pytest.approx(0.5, abs=1e-12) and icpt == pytest.approx(math.log(3.0), abs=1e-10)
    assert math.isnan(loglog_slope(T, [1.0, -1.0, 2.0])[0])


def test_sqrtT_logT_has_finite_T_slope_above_half():
    """Why the must-claim allows up to 0.7: c sqrt(T) log T over 2e3..2e5 has a log-log slope ~0.6."""
    T = np.geomspace(2e3, 2e5, 6)
    slope, _ = loglog_slope(T, np.sqrt(T) * np.log(T))
    assert 0.58 < slope < 0.62


def test_slope_interval_covers_the_truth():
    rng = np.random.default_rng(0)
    T = [1000, 4000, 16000, 64000]
    cells = [2.0 * t ** 0.5 * rng.lognormal(0, 0.2, size=16) for t in T]
    s = slope_with_ci(T, cells, 2000, 0.95, np.random.default_rng(1))
    assert s["ci_low"] < 0.5 < s["ci_high"] and s["ci_high"] - s["ci_low"] < 0.2
    assert s["boot_valid"] == 2000 and s["runs_per_T"] == [16] * 4


def test_ratio_with_ci():
    rng = np.random.default_rng(2)
    num, den = rng.normal(10, 1, 200), rng.normal(5, 0.5, 200)
    r = ratio_with_ci(num, den, 2000, 0.95, np.random.default_rng(3))
    assert r["ratio"] == pytest.approx(num.mean() / den.mean())
    assert r["ci_low"] < 2.0 < r["ci_high"]
