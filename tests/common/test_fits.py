"""stages.common.fits: the log-log slope of a power law is its exponent."""
from __future__ import annotations

import math

import numpy as np
import pytest

from stages.common.fits import loglog_slope


def test_power_law_gives_its_exponent_and_constant():
    x = np.array([10.0, 100.0, 1000.0, 1e4])
    slope, icpt = loglog_slope(x, 3.0 * x ** 0.5)
    assert slope == pytest.approx(0.5) and math.exp(icpt) == pytest.approx(3.0)
    assert 0.55 < loglog_slope(x, np.sqrt(x) * np.log(x))[0] < 0.75   # a log factor steepens it


def test_non_positive_or_non_finite_values_give_nan():
    assert all(math.isnan(v) for v in loglog_slope([1, 2, 3], [1.0, 0.0, 2.0]))
    assert all(math.isnan(v) for v in loglog_slope([1, 2, 3], [1.0, np.inf, 2.0]))


def test_loglog_slopes_match_one_fit_per_row_and_the_exponent():
    import numpy as np

    from stages.common.fits import loglog_slopes

    x = np.array([10, 20, 50, 100, 200])
    rows = np.vstack([3.0 * x ** 0.5, 0.1 * x ** -1.0, 7.0 * x ** 1.5])
    slopes = loglog_slopes(x, rows)
    np.testing.assert_allclose(slopes, [0.5, -1.0, 1.5], atol=1e-12)
    assert np.array_equal(slopes, np.array([loglog_slopes(x, r[None])[0] for r in rows]))
    np.testing.assert_allclose(slopes, [loglog_slope(x, r)[0] for r in rows], atol=1e-12)
    bad = np.array([[1.0, 0.0, 1.0, 1.0, 1.0]])         # a zero is fitted as 1: finite, the caller masks it
    assert np.isfinite(loglog_slopes(x, bad)).all()
