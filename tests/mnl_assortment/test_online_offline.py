"""The online and offline loops on tiny problems: regrets are non-negative, the final online
estimate is the MLE on all rounds (scipy agrees), the old width is the new radius times
1/(2 kappa), and the evaluation's slope fit recovers a known power law."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from stages.mnl_assortment.env import offline_env, online_env
from stages.mnl_assortment.evaluate import boot_slopes, checkpoints, loglog_slope, radius_key
from stages.mnl_assortment.mnl import enumerate_assortments, scipy_mle
from stages.mnl_assortment.offline import run_offline
from stages.mnl_assortment.online import refit_rounds, run_online


def tiny(**kw):
    base = dict(online_task="fresh", n_items=5, capacity=2, dim=3, revenue_low=0.5, revenue_high=1.0,
                radii=[1.0, 2.0], horizon=60, runs=2, offline_instances=2, offline_reps=3, offline_n=[20, 40],
                behaviour_explore=0.2)
    base.update(kw)
    return SimpleNamespace(**base)


def _prefixed(on, off):
    return {**{f"on_{k}": v for k, v in on.items()}, **{f"off_{k}": v for k, v in off.items()}}


def test_refit_schedule_is_geometric_and_ends_at_T():
    r = sorted(refit_rounds(2000, 1.1))
    assert r[0] == 1 and r[-1] == 2000
    assert all(b > a for a, b in zip(r, r[1:]))
    assert 50 < len(r) < 100
    assert sorted(refit_rounds(10, 1.0)) == list(range(1, 11))


def test_online_regret_nonnegative_and_final_estimate_is_the_mle():
    p = tiny()
    A = enumerate_assortments(p.n_items, p.capacity)
    env = _prefixed(online_env(p, 0, A), offline_env(p, 0, A))
    out = run_online(env, A, p.n_items, p.capacity, 1.0, 1.2, 1e-10, 50, progress=False)
    assert out["regret"].shape == (2 * 2 * 2, p.horizon)
    assert (out["regret"] >= -1e-12).all()
    for k in (0, 5):
        lib = scipy_mle(out["X"][k], out["mask"][k], out["y"][k], 1.0)
        np.testing.assert_allclose(out["theta"][k], lib.x, atol=1e-6)
    # both methods saw the same items and the same optimum: common random numbers
    np.testing.assert_array_equal(out["run_seed"][:4], out["run_seed"][4:])


def test_offline_suboptimality_nonnegative_and_plugin_finds_optimum_with_much_data():
    p = tiny(offline_n=[20, 3000], radii=[1.0])
    A = enumerate_assortments(p.n_items, p.capacity)
    env = _prefixed(online_env(p, 1, A), offline_env(p, 1, A))
    off = run_offline(env, A, p.offline_n, p.capacity, 1.0, 0.05, 1e-9, 50, progress=False)
    for rule, sub in off["suboptimality"].items():
        assert (sub >= 0).all(), rule
    assert off["suboptimality"]["plugin"][:, -1].mean() < 0.01
    assert off["q"] == pytest.approx(np.sqrt(2 * np.log(len(A) / 0.05)))


def test_behaviour_policy_rarely_shows_the_optimum():
    p = tiny(offline_n=[20, 4000], radii=[1.0], behaviour_explore=0.1, offline_instances=3, offline_reps=2)
    A = enumerate_assortments(p.n_items, p.capacity)
    off = offline_env(p, 2, A)
    share = (off["logged"] == off["star"][:, :, None, None]).mean()
    full = ((A < p.n_items).sum(1) == p.capacity).sum()
    assert share == pytest.approx(0.1 / full, abs=0.01)
    assert ((off["logged"] == off["habitual"][:, :, None, None]).mean()) == pytest.approx(0.9 + 0.1 / full, abs=0.02)


def test_slope_fit_recovers_a_power_law():
    t = checkpoints(2000, 0.05, 15)
    assert t[0] == 100 and t[-1] == 2000
    curves = np.array([3.0 * t ** 0.5, 5.0 * t ** 0.5])
    assert loglog_slope(t, curves.mean(0))[0] == pytest.approx(0.5)
    bs = boot_slopes(t, curves, np.array([[0, 0], [1, 1], [0, 1]]))
    np.testing.assert_allclose(bs, 0.5)
    assert radius_key(1.0) == "B1" and radius_key(0.25) == "B0p25"


def test_npz_is_reproducible_byte_for_byte(tmp_path):
    from stages.common.io import write_npz

    arrays = {"a": np.arange(12.0).reshape(3, 4), "b": np.array([1, 2, 3])}
    write_npz(tmp_path / "x.npz", arrays)
    write_npz(tmp_path / "y.npz", arrays)
    assert (tmp_path / "x.npz").read_bytes() == (tmp_path / "y.npz").read_bytes()
    with np.load(tmp_path / "x.npz") as z:
        np.testing.assert_array_equal(z["a"], arrays["a"])
        np.testing.assert_array_equal(z["b"], arrays["b"])


def test_run_interval_is_scipys_bootstrap_of_the_statistic_over_runs():
    """Resampling run indices gives scipy.stats.bootstrap's BCa interval of the same statistic on the
    values themselves (one array: the mean of the final regrets), and a paired ratio's point lies inside."""
    from types import SimpleNamespace

    from scipy import stats

    from stages.mnl_assortment.evaluate import run_interval

    ep = SimpleNamespace(ci_level=0.9, n_boot=2000)
    final = np.array([10.0, 12.5, 9.0, 14.0, 11.0, 13.5, 8.5])
    ours = run_interval(lambda i: final[i].mean(1), len(final), ep, seed=3)
    ref = stats.bootstrap((final,), np.mean, confidence_level=0.9, n_resamples=2000, method="BCa",
                          random_state=np.random.default_rng(3)).confidence_interval
    np.testing.assert_allclose(ours, [ref.low, ref.high], rtol=1e-12)
    old = final * np.array([1.9, 2.1, 2.0, 1.8, 2.2, 2.05, 1.95])
    lo, hi = run_interval(lambda i: old[i].mean(1) / final[i].mean(1), len(final), ep, seed=4)
    assert lo < old.mean() / final.mean() < hi and 1.8 < lo and hi < 2.2
