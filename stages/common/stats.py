"""Summary statistics that several studies report."""
from __future__ import annotations


def t_interval(values, level: float) -> dict:
    """Mean of ``values`` and its Student-t interval at ``level`` (n - 1 degrees of freedom,
    ``scipy.stats.t.interval`` around the mean with the standard error as scale): ``mean``,
    ``sem``, ``low``, ``high``, ``n``. With a zero standard error the interval is the mean."""
    import numpy as np
    from scipy import stats

    v = np.asarray(values, dtype=float)
    n = len(v)
    if n < 2:
        raise ValueError(f"t_interval needs at least 2 values, got {n}")
    mean, sem = float(v.mean()), float(v.std(ddof=1) / np.sqrt(n))
    lo, hi = stats.t.interval(level, n - 1, loc=mean, scale=sem) if sem > 0 else (mean, mean)
    return {"mean": mean, "sem": sem, "low": float(lo), "high": float(hi), "n": n}
