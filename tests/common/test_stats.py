"""stages.common.stats.t_interval against a hand computation and scipy."""
from __future__ import annotations

import math

import pytest

from stages.common.stats import t_interval


def test_t_interval_by_hand():
    # values 1, 2, 3, 4: mean 2.5, sd sqrt(5/3), sem sqrt(5/12); t(0.975, 3) = 3.182446305284263
    ci = t_interval([1, 2, 3, 4], 0.95)
    half = 3.182446305284263 * math.sqrt(5 / 12)
    assert ci["mean"] == 2.5 and ci["n"] == 4
    assert ci["sem"] == pytest.approx(math.sqrt(5 / 12), rel=1e-15)
    assert ci["low"] == pytest.approx(2.5 - half, rel=1e-12) and ci["high"] == pytest.approx(2.5 + half, rel=1e-12)


def test_t_interval_degenerate_and_too_short():
    assert t_interval([3.0, 3.0, 3.0], 0.9) == {"mean": 3.0, "sem": 0.0, "low": 3.0, "high": 3.0, "n": 3}
    with pytest.raises(ValueError, match="at least 2 values"):
        t_interval([1.0], 0.95)
