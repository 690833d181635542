"""The offline intervals (evaluate.mean_ci): scipy's BCa bootstrap, against scipy itself and
against the percentile bootstrap it replaced, and offline_metrics on a synthetic result."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from stages.mnl_assortment.evaluate import mean_ci, offline_metrics


def old_mean_ci(v, n_boot, level, rng):
    """The hand-written percentile bootstrap evaluate.py used before scipy's BCa (reference copy):
    the mean, the interval and the resampled means."""
    v = np.asarray(v, dtype=float).ravel()
    bm = v[rng.integers(0, len(v), size=(n_boot, len(v)))].mean(1)
    a = (1 - level) / 2
    return float(v.mean()), np.quantile(bm, [a, 1 - a]).tolist(), bm


def suboptimality(g, zero_share, scale, instances=8, reps=25):
    """R(S*) - R(S_hat) of one rule at one n, the default profile's shape (8 instances x 25
    data sets): 0 where the rule found the optimum, else one of a few gaps of its instance."""
    gaps = g.exponential(scale, size=(instances, 3))
    pick = g.integers(0, 3, size=(instances, reps))
    return np.where(g.random((instances, reps)) < zero_share, 0.0, np.take_along_axis(gaps, pick, 1))


def test_mean_ci_is_scipys_bca_with_a_seed_from_rng():
    v = suboptimality(np.random.default_rng(0), 0.43, 0.06)
    mean, ci = mean_ci(v, 1000, 0.95, np.random.default_rng(7))
    seed = int(np.random.default_rng(7).integers(2**32))
    ref = stats.bootstrap((v.ravel(),), np.mean, n_resamples=1000, confidence_level=0.95, method="BCa",
                          random_state=np.random.default_rng(seed)).confidence_interval
    assert mean == pytest.approx(v.mean()) and ci == pytest.approx([ref.low, ref.high], rel=1e-12)
    assert mean_ci(np.zeros((8, 25)), 1000, 0.95, np.random.default_rng(7)) == (0.0, [0.0, 0.0])


def test_mean_ci_agrees_with_the_old_percentile_bootstrap():
    """Shapes of the committed default run: at n = 50 plug-in found the optimum in about 74 % of
    the data sets, new-region pessimism in 43 %, old-region in none; smallest_n pools the three
    radii (600 values) and takes paired differences. scipy's percentile interval draws the same
    resamples from the same seed, so it equals the old one. BCa moves each end by its bias and
    skew correction (z0 + a z^2 in normal units): for a mean of mostly zeros and a few gaps the
    resampled means are right-skewed and the correction reaches about 0.9 sd of the bootstrap
    distribution (plug-in's 74 % zeros; 0.6 sd at 43 %, 0.4 sd with no zeros), for the pooled
    differences about 0.3 sd (worst over 30 synthetic draws). BCa is held to 1.0 sd for a rule's
    mean and 0.5 sd for a pooled difference."""
    g = np.random.default_rng(1)
    plugin, new, old = (suboptimality(g, 0.74, 0.008), suboptimality(g, 0.43, 0.06),
                        suboptimality(g, 0.0, 0.17))
    pooled = np.concatenate([suboptimality(g, 0.43, 0.06) - suboptimality(g, 0.74, 0.008) for _ in range(3)])
    for v, tol in ((plugin, 1.0), (new, 1.0), (old, 1.0), (pooled, 0.5)):
        seed = int(np.random.default_rng(3).integers(2**32))        # the seed mean_ci draws from rng
        mean, old_ci, draws = old_mean_ci(v, 1000, 0.95, np.random.default_rng(seed))
        assert mean_ci(v, 1000, 0.95, np.random.default_rng(3), method="percentile")[1] == pytest.approx(old_ci,
                                                                                                         rel=1e-12)
        bca = mean_ci(v, 1000, 0.95, np.random.default_rng(3))[1]
        assert bca[0] < mean < bca[1]                                  # BCa defined: not the point
        assert np.abs(np.subtract(bca, old_ci)).max() <= tol * draws.std()


def test_offline_metrics_intervals_bracket_the_means():
    g = np.random.default_rng(2)
    ns, radii = np.array([50, 200]), np.array([1.0, 2.0])
    sub = {k: np.stack([np.stack([suboptimality(g, z, s) for _ in ns]) for _ in radii])
           for k, z, s in (("plugin", 0.74, 0.008), ("new", 0.43, 0.06), ("old", 0.0, 0.17))}
    res = {"offline_n": ns, "radii": radii, **{f"offline_sub_{k}": v for k, v in sub.items()},
           "offline_pick_new": np.zeros((2, 2, 8, 25), int), "offline_star": np.zeros((2, 8), int)}
    ep = type("EP", (), {"n_boot": 500, "ci_level": 0.95})()
    out = offline_metrics(res, ep, np.random.default_rng(0))
    s = out["smallest_n"]
    for k in ("plugin", "new", "old", "new_minus_plugin", "new_minus_old"):
        assert s[f"{k}_ci"][0] < s[k] < s[f"{k}_ci"][1]
    assert s["new_minus_plugin"] == pytest.approx(float((sub["new"][:, 0] - sub["plugin"][:, 0]).mean()))
    for B in ("B1", "B2"):
        for k in sub:
            for m, (lo, hi) in zip(out[B][k]["mean"], out[B][k]["ci"]):
                assert lo < m < hi
    assert offline_metrics(res, ep, np.random.default_rng(0)) == out            # one rng, the same intervals
