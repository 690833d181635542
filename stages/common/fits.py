"""Fits that several studies use to read a rate off a sweep."""
from __future__ import annotations


def loglog_slope(x, y) -> tuple[float, float]:
    """(slope, intercept) of the least-squares line of log y on log x: y = e^intercept x^slope.
    NaN for both when some y is not positive or not finite (a rate cannot be read then)."""
    import numpy as np

    y = np.asarray(y, dtype=float)
    if (y <= 0).any() or not np.isfinite(y).all():
        return float("nan"), float("nan")
    slope, icpt = np.polyfit(np.log(np.asarray(x, dtype=float)), np.log(y), 1)
    return float(slope), float(icpt)
