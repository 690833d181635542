"""The regret-slope fit and the violation count on curves with known answers."""
from __future__ import annotations

import numpy as np
import pytest

from stages.linear_cmdp.evaluate import agent_metrics, fit_points, loglog_slope, slope_with_ci
from stages.linear_cmdp.params import EvaluateParams


def test_fit_points_span_the_window():
    k = fit_points(10_000, 0.5)
    assert k[0] == 5000 and k[-1] == 10_000 and len(k) > 100 and (np.diff(k) > 0).all()


def test_slope_of_power_laws():
    k = fit_points(10_000, 0.5)
    assert loglog_slope(k, 3 * np.sqrt(k))[0] == pytest.approx(0.5)
    rng = np.random.default_rng(0)
    curves = np.outer(rng.uniform(1, 3, size=6), k ** 0.6)
    fit = slope_with_ci(k, curves, 300, 0.95, rng)
    assert fit["slope"] == pytest.approx(0.6) and fit["ci_low"] == pytest.approx(0.6)
    assert fit["per_instance"] == pytest.approx([0.6] * 6)
    # sqrt(k) log k has a finite-window slope above 1/2 (the log factor of O~)
    assert 0.55 < loglog_slope(k, np.sqrt(k) * np.log(k))[0] < 0.7


def test_violations_counted_on_exact_utility_with_tolerance():
    ep = EvaluateParams(main_agent="opse", no_pessimism_agent="opse_np", primal_dual_agent="ghosh", fit_from=0.5,
                        violation_tol=1e-9, n_boot=100, ci_level=0.95)
    insts = [{"setup": "tabular", "v_star": 1.0, "threshold": 0.5}]
    V_u = np.full((1, 20), 0.5)
    V_u[0, 3] = 0.5 - 1e-10                        # within tolerance: not a violation
    V_u[0, 7] = 0.5 - 1e-6                         # a violation
    res = {"a/V_r": np.full((1, 20), 0.9), "a/V_u": V_u, "a/safe": np.zeros((1, 20)), "a/instance": np.array([0])}
    m = agent_metrics(res, "a", insts, ep, np.random.default_rng(0))
    assert m["violating_episodes"] == 1 and m["first_violation_episode"] == 8
    assert m["max_violation"] == pytest.approx(1e-6)
    assert m["setups"]["tabular"]["regret_at_K"] == pytest.approx(2.0)
    assert m["setups"]["tabular"]["slope"] == pytest.approx(1.0)


def test_results_file_is_byte_reproducible(tmp_path):
    # train writes data/linear_cmdp/results.npz with stages.common.io.write_npz: the same runs give
    # the same bytes, so DVC sees an unchanged output and evaluate stays up to date
    import time

    from stages.common.io import write_npz

    arrays = {"opse/V_r": np.arange(6.0).reshape(2, 3), "opse/instance": np.array([0, 1])}
    a = write_npz(tmp_path / "a.npz", arrays).read_bytes()
    time.sleep(1.1)
    b = write_npz(tmp_path / "b.npz", dict(reversed(list(arrays.items())))).read_bytes()
    assert a == b
    loaded = np.load(tmp_path / "a.npz")
    np.testing.assert_array_equal(loaded["opse/V_r"], arrays["opse/V_r"])
