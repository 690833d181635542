"""Statistics for verdicts over seeds, on the field's libraries: ``scipy.stats`` (the t-interval,
``bootstrap`` with BCa, ``permutation_test``) and ``statsmodels`` (TOST).

The ledger judges every claim of the claims contract v2 (docs/VERDICTS.md, section 2) with
:func:`judge`: its per-seed values, the claim's ``op``/``threshold`` and its ``rule``:

* ``interval``: the two-sided 90 % interval of the per-seed mean (so each side is a one-sided
  95 % bound) is the t-interval for n < 8 and the BCa bootstrap for n >= 8. It lies entirely past
  the threshold: **holds**; entirely short of it: **fails**; otherwise **inconclusive**. For
  ``between [lo, hi]`` the interval inside [lo, hi] holds (for n < 8 this is statsmodels' TOST at
  5 %, which :func:`judge` uses and reports as ``tost_p``), entirely outside fails. With zero
  spread (a deterministic figure) the mean decides.
* ``equivalence``: "A within delta of B": the ``between`` case of ``interval``, by name.
* ``every_seed``: holds when every seed's value passes, fails otherwise.

Comparative claims are judged on paired per-seed differences (A and B ran on the same seed):
:func:`paired_effect` gives d_z = mean / sd of the differences and P(A > B) over seeds, and
:func:`paired_permutation_p` the sign-flip permutation test of the mean difference.

Studies use :func:`bootstrap_interval` for their own intervals (over replications, tasks or
samples): ``scipy.stats.bootstrap``, BCa by default, ``paired`` for statistics of matched pairs.
(:func:`stages.common.stats.t_interval` predates this module; studies move to this one as they
move onto the contract.)

Everything here is deterministic: bootstraps and permutations draw from a fixed seed.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from typing import Callable, Sequence

CONFIDENCE = 0.90        # two-sided, so each bound is a one-sided 95 % bound
BCA_FROM_N = 8           # t-interval below, BCa bootstrap from here on
RESAMPLES = 9999
RULES = ("interval", "every_seed", "equivalence")


def _array(values: Sequence[float]):
    import numpy as np

    v = np.asarray(list(values), dtype=float)
    if v.ndim != 1:
        raise ValueError(f"expected a flat list of numbers, got shape {v.shape}")
    return v


def t_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The two-sided Student-t interval of the mean (``scipy.stats.t.interval``, n - 1 degrees
    of freedom, the standard error as scale). Zero spread gives (mean, mean)."""
    from scipy import stats

    v = _array(values)
    if len(v) < 2:
        raise ValueError(f"a t-interval needs at least 2 values, got {len(v)}")
    mean, sem = float(v.mean()), float(stats.sem(v))
    if sem == 0.0:
        return mean, mean
    lo, hi = stats.t.interval(confidence, len(v) - 1, loc=mean, scale=sem)
    return float(lo), float(hi)


def bootstrap_interval(data: Sequence | tuple, statistic: Callable = None, *,
                       confidence: float = CONFIDENCE, method: str = "BCa", paired: bool = False,
                       n_resamples: int = RESAMPLES, seed: int = 0,
                       batch: int | None = None) -> tuple[float, float]:
    """``scipy.stats.bootstrap``'s interval of ``statistic`` (default: the mean).

    ``data`` is one sample (a list of numbers) or a tuple of samples; ``statistic`` takes as
    many arrays as there are samples and an ``axis`` keyword (vectorised, as scipy wants).
    ``paired=True`` resamples matched elements of the samples together. ``batch`` bounds the
    resamples (and BCa's jackknife rows) held in memory at once: a sample of R values otherwise
    costs n_resamples x R for the resamples and R x R for the jackknife (with one sample the
    interval is the same; with several, the resamples are drawn in another order). A statistic with no
    spread over the data gives (value, value) instead of scipy's NaN interval."""
    import numpy as np
    from scipy import stats

    samples = tuple(_array(s) for s in data) if isinstance(data, tuple) else (_array(data),)
    if statistic is None:
        statistic = np.mean
    point = float(statistic(*samples, axis=-1))
    if all(np.ptp(s) == 0 for s in samples):
        return point, point
    with warnings.catch_warnings():      # a degenerate resample distribution: handled below
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", getattr(stats, "DegenerateDataWarning", RuntimeWarning))
        res = stats.bootstrap(samples, statistic, confidence_level=confidence, method=method,
                              paired=paired, vectorized=True, n_resamples=n_resamples, batch=batch,
                              random_state=np.random.default_rng(seed))
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (math.isfinite(lo) and math.isfinite(hi)):       # a degenerate resample distribution
        return point, point
    return lo, hi


def mean_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[tuple[float, float], str]:
    """The interval of the mean of per-seed values the ledger shows, and its method:
    the t-interval for n < 8, the BCa bootstrap from n = 8 (VERDICTS.md, section 2)."""
    v = _array(values)
    if len(v) < BCA_FROM_N:
        return t_interval(v, confidence), "t"
    return bootstrap_interval(v, confidence=confidence), "BCa"


def tost_p(values: Sequence[float], low: float, high: float) -> float:
    """statsmodels' TOST p-value that the mean lies inside [low, high] (one sample); below 0.05
    exactly when the two-sided 90 % t-interval lies inside [low, high]."""
    from statsmodels.stats.weightstats import DescrStatsW

    v = _array(values)
    if float(v.std()) == 0.0:          # statsmodels divides by the standard error
        return 0.0 if low < float(v.mean()) < high else 1.0
    p, _, _ = DescrStatsW(v).ttost_mean(low, high)
    return float(p)


def paired_effect(a: Sequence[float], b: Sequence[float]) -> dict:
    """Effect of A over B on paired seeds: d_z = mean / sd (ddof 1) of the differences A - B
    (None with fewer than 2 pairs or zero spread), and P(A > B), the share of seeds where A's
    value is above B's."""
    import numpy as np

    d = _array(a) - _array(b)
    sd = float(d.std(ddof=1)) if len(d) > 1 else 0.0
    return {"d_z": float(d.mean()) / sd if sd > 0 else None,
            "p_greater": float(np.mean(d > 0)) if len(d) else None}


def paired_permutation_p(a: Sequence[float], b: Sequence[float], alternative: str = "greater") -> float:
    """``scipy.stats.permutation_test`` of the mean paired difference A - B (signs flipped within
    pairs; every one of the 2**n assignments for small n)."""
    import numpy as np
    from scipy import stats

    res = stats.permutation_test((_array(a), _array(b)), lambda x, y, axis: np.mean(x - y, axis=axis),
                                 permutation_type="samples", alternative=alternative, vectorized=True,
                                 n_resamples=RESAMPLES, random_state=np.random.default_rng(0))
    return float(res.pvalue)


def compare(value: float, op: str, threshold) -> bool:
    if op == "between":
        lo, hi = threshold
        return lo <= value <= hi
    return {">=": value >= threshold, ">": value > threshold,
            "<=": value <= threshold, "<": value < threshold}[op]


def _interval_verdict(lo: float, hi: float, op: str, threshold) -> str:
    """Where the interval [lo, hi] lies against the check: holds / fails / inconclusive."""
    if op == "between":
        a, b = threshold
        if a <= lo and hi <= b:
            return "holds"
        return "fails" if hi < a or lo > b else "inconclusive"
    t = threshold
    past = {">": lo > t, ">=": lo >= t, "<": hi < t, "<=": hi <= t}[op]
    short = {">": hi <= t, ">=": hi < t, "<": lo >= t, "<=": lo > t}[op]
    return "holds" if past else "fails" if short else "inconclusive"


@dataclass(frozen=True)
class Judgement:
    verdict: str                 # holds / fails / inconclusive / not run
    n: int
    mean: float | None
    sd: float | None
    interval: tuple[float, float] | None
    method: str | None           # t, BCa, every_seed, exact (zero spread)
    passing: int | None          # seeds whose own value passes the check
    tost_p: float | None = None

    def as_dict(self) -> dict:
        d = asdict(self)
        d["interval"] = list(self.interval) if self.interval is not None else None
        return d


def judge(values: Sequence[float | None], op: str, threshold, rule: str = "interval") -> Judgement:
    """The verdict of one check over per-seed ``values`` (see the module docstring). A missing
    or non-finite value on any seed makes it ``not run``: a verdict never rests on part of the
    seeds."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}; one of {', '.join(RULES)}")
    if rule == "equivalence" and op != "between":
        raise ValueError("rule 'equivalence' needs op 'between' with [low, high]")
    vals = list(values)
    if not vals or any(v is None or not math.isfinite(v) for v in vals):
        return Judgement("not run", len(vals), None, None, None, None, None)
    import numpy as np

    v = np.asarray(vals, dtype=float)
    n, mean = len(v), float(v.mean())
    sd = float(v.std(ddof=1)) if n > 1 else 0.0
    passing = int(sum(compare(float(x), op, threshold) for x in v))
    if rule == "every_seed":
        interval = mean_interval(v)[0] if n > 1 else None
        return Judgement("holds" if passing == n else "fails", n, mean, sd, interval, "every_seed", passing)
    if n == 1 or sd == 0.0:
        return Judgement("holds" if compare(mean, op, threshold) else "fails", n, mean, sd,
                         (mean, mean), "exact", passing)
    interval, method = mean_interval(v)
    verdict = _interval_verdict(*interval, op, threshold)
    tp = None
    if op == "between" and method == "t":
        tp = tost_p(v, *threshold)
        inside = tp < 0.05
        verdict = "holds" if inside else ("fails" if verdict == "fails" else "inconclusive")
    return Judgement(verdict, n, mean, sd, interval, method, passing, tp)
