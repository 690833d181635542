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


def loglog_slopes(x, Y):
    """Least-squares slopes of log Y[i] on log x, one per row of ``Y`` (n_rows, len(x)): the
    slope of every bootstrap resample of a curve in one call. A non-positive entry is fitted as
    1 (log 0); the caller drops or masks the rows that hold one."""
    import numpy as np

    Y = np.asarray(Y, dtype=float)
    logx = np.log(np.asarray(x, dtype=float))
    X = np.vstack([logx, np.ones_like(logx)]).T
    return np.linalg.lstsq(X, np.log(np.where(Y > 0, Y, 1.0)).T, rcond=None)[0][0]
