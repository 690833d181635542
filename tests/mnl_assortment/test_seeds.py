"""Seeds as an axis (docs/VERDICTS.md, section 1) and what the claims of the contract v2 read: a
verdict seed's figures depend on that seed only (seeds [0, 1] and [1] give seed 1 the same runs),
one batch of several seeds equals one seed after another bit for bit, the region distances are
what they say, the arms are what they say, the per-seed figures read the refits they should, and
the must is wired to its control (a planted passing control makes it not specific)."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from stages.common.claims import evaluate, load_claims
from stages.mnl_assortment.env import compact_online, expand_online, offline_env, online_env, stack_online
from stages.mnl_assortment.evaluate import curve_slope, online_seed_metrics, seed_metrics
from stages.mnl_assortment.mnl import confidence_radius, enumerate_assortments, kappa, log_revenue
from stages.mnl_assortment.online import ARMS, GREEDY, NEW, Arm, run_online
from stages.mnl_assortment.train import results_arrays, simulate, simulate_seeds

REPO = Path(__file__).resolve().parents[2]


def tiny_prepare(**kw):
    base = dict(online_task="fresh", n_items=5, capacity=2, dim=3, revenue_low=0.5, revenue_high=1.0,
                radii=[1.0, 2.0], horizon=60, runs=2, offline_instances=2, offline_reps=2, offline_n=[20, 40],
                behaviour_explore=0.2)
    base.update(kw)
    return SimpleNamespace(**base)


TRAIN = SimpleNamespace(ridge=1.0, refit_growth=1.3, newton_tol=1e-8, newton_max_iter=50, pessimism_delta=0.05)
EVAL = SimpleNamespace(fit_from=0.1, fit_points=6, n_boot=200, ci_level=0.9)


def envs(p, seeds, A):
    return {s: online_env(p, s, A) for s in seeds}, {s: offline_env(p, s, A) for s in seeds}


def by_run(on: dict, seed: int) -> dict:
    """A seed's online arrays, its runs ordered by (arm, radius, run)."""
    mine = np.flatnonzero(on["run_seed"] == seed)
    order = mine[np.lexsort((on["run_index"][mine], on["run_radius"][mine], on["run_method"][mine]))]
    return {k: on[k][order] for k in ("regret", "theta", "region_h", "region_v", "run_method", "run_radius")}


@pytest.mark.parametrize("task", ["fresh", "canonical"])
def test_a_seeds_figures_depend_on_that_seed_only(task):
    p = tiny_prepare(online_task=task)
    A = enumerate_assortments(p.n_items, p.capacity)
    on, off = envs(p, [0, 1], A)
    both = simulate_seeds(p, TRAIN, [0, 1], on, off, A, progress=False)
    alone = simulate_seeds(p, TRAIN, [1], {1: on[1]}, {1: off[1]}, A, progress=False)
    a, b = by_run(both["online"], 1), by_run(alone["online"], 1)
    for k in a:
        assert np.array_equal(a[k], b[k]), k
    inst = both["offline"]["instance_seed"] == 1
    for rule, v in both["offline"]["suboptimality"].items():
        assert np.array_equal(v[:, :, inst], alone["offline"]["suboptimality"][rule]), rule
    # and the per-seed figures the ledger reads
    m_both = json.dumps(seed_metrics(results_arrays(both, [0, 1], p), 1, EVAL), sort_keys=True)   # NaN == NaN
    m_alone = json.dumps(seed_metrics(results_arrays(alone, [1], p), 1, EVAL), sort_keys=True)
    assert m_both == m_alone
    assert json.dumps(seed_metrics(results_arrays(both, [0, 1], p), 0, EVAL), sort_keys=True) != m_both


def test_one_batch_of_seeds_equals_one_seed_after_another():
    """simulate() of two seeds in one batch and simulate_seeds() (what the stage runs) give every
    run and every offline data set the same figures, bit for bit."""
    p = tiny_prepare()
    A = enumerate_assortments(p.n_items, p.capacity)
    on, off = envs(p, [3, 4], A)
    together = simulate(p, TRAIN, [3, 4], on, off, A, progress=False)
    after = simulate_seeds(p, TRAIN, [3, 4], on, off, A, progress=False)
    for s in (3, 4):
        x, y = by_run(together["online"], s), by_run(after["online"], s)
        for k in x:
            assert np.array_equal(x[k], y[k]), (s, k)
    for rule, v in together["offline"]["suboptimality"].items():
        assert np.array_equal(v, after["offline"]["suboptimality"][rule])
    assert np.array_equal(together["offline"]["instance_seed"], after["offline"]["instance_seed"])


def test_region_distances_are_the_norms_at_the_last_refit():
    """region_h / region_v at the last refit (t = T) are ||theta_hat - theta*|| in the final
    Hessian and Gram matrices over beta_T, computed here by hand; the Hessian is the ridge plus
    the Fisher information at the final estimate."""
    from stages.mnl_assortment.mnl import fisher

    p = tiny_prepare()
    A = enumerate_assortments(p.n_items, p.capacity)
    env = {f"on_{k}": v for k, v in online_env(p, 5, A).items()}
    out = run_online(env, A, p.n_items, p.capacity, 1.0, 1.3, 1e-10, 50, arms=ARMS, progress=False)
    beta = confidence_radius(p.horizon, p.dim, p.capacity)
    err = out["theta"] - out["theta_star"]
    H = np.eye(p.dim) + fisher(out["theta"], out["X"], out["mask"])
    np.testing.assert_allclose(out["H"], H, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out["region_h"][:, -1], np.sqrt(np.einsum("rd,rde,re->r", err, H, err)) / beta,
                               rtol=1e-12)
    V = np.eye(p.dim) + np.einsum("rtkd,rtke->rde", out["X"], out["X"])
    np.testing.assert_allclose(out["region_v"][:, -1], np.sqrt(np.einsum("rd,rde,re->r", err, V, err)) / beta,
                               rtol=1e-10)
    assert out["refit_rounds"][-1] == p.horizon and (out["region_h"] > 0).all()


def test_arms_are_what_they_say():
    """Greedy offers the plug-in best assortment (round 1: theta_hat = 0, so the revenue-best
    assortment at zero utilities); a width of scale 0 under either norm is the same arm; the old
    arm's width is 1/(2 kappa) times the Gram arm's, so it explores: its regret at T is higher."""
    p = tiny_prepare(radii=[2.0], horizon=80)
    A = enumerate_assortments(p.n_items, p.capacity)
    env = {f"on_{k}": v for k, v in online_env(p, 6, A).items()}
    arms = (GREEDY, Arm("greedy_gram", "gram", False, 0.0), NEW, Arm("old", "gram", True, 1.0))
    out = run_online(env, A, p.n_items, p.capacity, 1.0, 1.3, 1e-10, 50, arms=arms, progress=False)
    g = out["run_method"] == 0
    first = np.argmax(log_revenue(np.zeros((p.runs, p.n_items)), env["on_revs"][0], A), -1)
    assert np.array_equal(out["chosen"][g, 0], first)
    assert np.array_equal(out["regret"][g], out["regret"][out["run_method"] == 1])
    assert out["regret"][out["run_method"] == 3].sum() > out["regret"][out["run_method"] == 2].sum()
    assert out["kappa"][0] == pytest.approx(kappa(2.0, p.capacity))
    with pytest.raises(ValueError, match="arm x: norm must be 'hessian' or 'gram', got 'fisher'"):
        Arm("x", "fisher")
    with pytest.raises(ValueError, match="arm y: scale must be >= 0, got -1.0"):
        Arm("y", scale=-1.0)


def test_canonical_problem_and_its_stored_form():
    """The canonical task: one-hot features, utilities theta*_i = B s_i in [-B, B], the optimum by
    enumeration; the stored (compact) arrays expand back to the same arrays, for both tasks."""
    p = tiny_prepare(online_task="canonical", n_items=4, horizon=30, runs=3)
    A = enumerate_assortments(p.n_items, p.capacity)
    on = online_env(p, 7, A)
    assert on["feats"].shape == (30, 3, 4, 4) and np.array_equal(on["feats"][12, 1], np.eye(4))
    assert (np.abs(on["dirs"]) <= 1).all()
    for b, B in enumerate(p.radii):
        u = on["feats"][0] @ (B * on["dirs"])[..., None]
        best = np.exp(log_revenue(u[..., 0], on["revs"][0], A).max(-1))
        assert np.array_equal(on["best_rev"][b, 17], best)
    for task in ("canonical", "fresh"):
        q = tiny_prepare(online_task=task, n_items=4, horizon=30, runs=3)
        full = online_env(q, 8, A)
        back = expand_online(compact_online(full))
        assert set(back) == set(full)
        for k in full:
            assert np.array_equal(back[k], full[k]), (task, k)
    with pytest.raises(ValueError, match="different radii"):
        stack_online([online_env(p, 1, A), online_env(tiny_prepare(online_task="canonical", n_items=4, horizon=30,
                                                                   runs=3, radii=[1.0, 3.0]), 2, A)])


def test_curve_slope_reads_the_positive_checkpoints():
    t = np.array([10, 20, 40, 80, 160])
    assert curve_slope(t, np.zeros(5)) == (0.0, pytest.approx(float("nan"), nan_ok=True))
    assert curve_slope(t, np.array([0.0, 0.0, 0.0, 0.0, 3.0]))[0] == 0.0
    slope, _ = curve_slope(t, np.array([0.0, 0.0, 2.0 * 40 ** 0.5, 2.0 * 80 ** 0.5, 2.0 * 160 ** 0.5]))
    assert slope == pytest.approx(0.5)


def synthetic_seed(late_h=0.5, early_h=3.0, late_v=1.4):
    """One seed's online results by hand: arms new/old/gram/greedy, one radius, two runs; every
    run's regret sqrt(t) - sqrt(t - 1) a round (cumulative sqrt t) except greedy and old (constant)."""
    T, arms = 400, ["new", "old", "gram", "greedy"]
    refits = np.array([1, 10, 40, 100, 400])
    rows = [(a, i) for a in range(4) for i in range(2)]
    t = np.arange(1, T + 1)
    regret = np.array([np.sqrt(t) - np.sqrt(t - 1) if a in (0, 2) else np.full(T, 0.2) for a, _ in rows])
    region_h = np.tile([early_h, early_h, late_h, late_h, late_h], (len(rows), 1))
    region_v = np.tile([early_h, early_h, late_v, late_v, late_v], (len(rows), 1))
    return {"regret": regret, "run_arm": np.array([a for a, _ in rows]), "run_radius": np.zeros(len(rows), int),
            "run_index": np.array([i for _, i in rows]), "arms": np.array(arms), "radii": np.array([2.0]),
            "kappa": np.full(len(rows), kappa(2.0, 4)), "region_h": region_h, "region_v": region_v,
            "refit_rounds": refits}


def test_online_seed_metrics_read_the_refits_from_fit_from_on():
    ep = SimpleNamespace(fit_from=0.05, fit_points=8, n_boot=200, ci_level=0.9)
    m = online_seed_metrics(synthetic_seed(), ep, np.random.default_rng(0))
    assert m["region"]["new_max"] == pytest.approx(0.5)                   # refits at t >= 20 only
    assert m["region"]["by_radius"]["B2"]["new"]["max_all_refits"] == pytest.approx(3.0)
    assert m["region"]["gram_max"] == pytest.approx(1.4)
    assert m["region"]["old_max"] == pytest.approx(1.4 * 2 * kappa(2.0, 4))
    assert m["region"]["by_radius"]["B2"]["gram"]["covered_share"] == 0.0
    assert m["new_slope_max"] == pytest.approx(0.5) and m["greedy_slope_max"] == pytest.approx(1.0)
    assert m["ratio_min"] == pytest.approx(m["B2"]["old"]["regret_T"] / m["B2"]["new"]["regret_T"])
    assert m["ratio_gram_min"] == pytest.approx(m["ratio_min"])


def _metrics(values: dict[str, list[float]]) -> dict:
    per = {}
    for s in range(5):
        node = {}
        for key, vals in values.items():
            cur = node
            *path, last = key.split(".")
            for k in path:
                cur = cur.setdefault(k, {})
            cur[last] = vals[s]
        per[str(s)] = node
    return {"per_seed": per}


def test_claims_read_the_must_with_its_control():
    """The must is the region's reach with the Gram region as its control: a planted control that
    stays within its radius too makes the must not specific; the regret shoulds read theirs."""
    cf = load_claims(REPO / "stages/mnl_assortment/claims.yaml")
    good = {"online.region.new_max": [0.52, 0.5, 0.54, 0.49, 0.51], "online.region.gram_max": [1.25, 1.5, 1.5, 1.4, 1.4],
            "online.new_slope_max": [0.42, 0.43, 0.42, 0.42, 0.42], "online.greedy_slope_max": [0.9, 1.0, 0.95, 0.97, 1.0],
            "online.ratio_min": [11.0, 11.1, 10.9, 11.2, 11.0], "online.ratio_gram_min": [5.0, 6.0, 4.0, 5.5, 6.5]}
    rows = {r["id"]: r for r in evaluate(cf, _metrics(good), list(range(5)))}
    assert rows["new_region_kappa_free"]["verdict"] == "holds"
    assert rows["new_region_kappa_free"]["control"]["verdict"] == "fails"
    assert rows["new_regret_slope_every_radius"]["verdict"] == "holds"
    assert rows["baseline_regret_ratio_every_radius"]["verdict"] == "holds"
    bad = copy.deepcopy(good)
    bad["online.region.gram_max"] = [0.8, 0.9, 0.85, 0.9, 0.8]
    bad["online.greedy_slope_max"] = [0.3, 0.35, 0.36, 0.4, 0.36]
    bad["online.ratio_gram_min"] = [65.0, 67.0, 64.8, 64.8, 62.9]
    rows = {r["id"]: r for r in evaluate(cf, _metrics(bad), list(range(5)))}
    assert rows["new_region_kappa_free"]["verdict"] == "not specific"
    assert rows["new_regret_slope_every_radius"]["verdict"] == "not specific"
    assert rows["baseline_regret_ratio_every_radius"]["verdict"] == "not specific"
    assert rows["enumeration_matches_highs"]["verdict"] == rows["mle_matches_scipy"]["verdict"] == "retired"
    assert [r["id"] for r in rows.values() if r["level"] == "must" and r["verdict"] != "retired"] == [
        "new_region_kappa_free"]
