"""The likelihood and the samplers: cached incremental fields equal recomputed ones, a softmax
step by hand, and Gibbs / SIS resample-move against the exact posterior on a tiny world."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from stages.nav_knowledge.infer import Model, ess, gibbs, predictive_nll, sis
from stages.nav_knowledge.planner import grid_neighbours
from stages.nav_knowledge.world import World, make_world, pick_start_goal, simulate


def _agent(seed, grid=10, n_walls=6, n_paths=3, beta=3.0):
    rng = np.random.default_rng(seed)
    w = make_world(rng, grid, grid, n_walls, (2, 3))
    known = rng.random(w.n_walls) < 0.5
    paths = []
    for _ in range(n_paths):
        s, g = pick_start_goal(rng, w, grid)
        paths.append(simulate(w, known, s, g, beta, rng, 300)["path"])
    return w, known, paths


def test_softmax_step_by_hand():
    """Open 3x3 grid, start in a corner, goal in the opposite one: both moves have cost-to-go 3,
    so the first step has probability 1/2; then the agent at an edge cell has one move at
    distance 1 better than the two others."""
    w = World(3, 3, np.full(9, -1), [], grid_neighbours(3, 3))
    m = Model(w, [[0, 1, 2, 5, 8]], beta=2.0)
    ll = m.state(np.zeros(0, bool)).ll
    assert ll[0] == pytest.approx(np.log(0.5))
    # at cell 1 (dist 3): neighbours 0 (dist 4), 2 (dist 2), 4 (dist 2)
    assert ll[1] == pytest.approx(-2 * 2 - np.log(np.exp(-8) + 2 * np.exp(-4)))


@pytest.mark.parametrize("seed", range(3))
def test_flip_by_repair_equals_recompute(seed):
    w, known, paths = _agent(seed)
    m = Model(w, paths, 3.0)
    s = m.state(known)
    for k in range(w.n_walls):
        flipped = m.flipped(s, k)
        ref = m.state(flipped.known)
        assert np.array_equal(flipped.mat, ref.mat)
        np.testing.assert_allclose(flipped.ll, ref.ll, rtol=0, atol=1e-12)


def test_trajectory_log_likelihood_sums_steps_and_predictive_nll():
    w, known, paths = _agent(7)
    m = Model(w, paths, 3.0)
    s = m.state(known)
    assert m.traj_ll(s).sum() == pytest.approx(s.ll.sum())
    one = predictive_nll(w, paths[:1], 3.0, known[None], np.ones(1))
    assert one == pytest.approx(-Model(w, paths[:1], 3.0).traj_ll(Model(w, paths[:1], 3.0).state(known))[0])


def _exact_marginals(m: Model, p_known: float) -> np.ndarray:
    nw = m.world.n_walls
    logp, K = [], []
    for bits in itertools.product([False, True], repeat=nw):
        k = np.array(bits)
        logp.append(m.state(k).ll.sum() + k.sum() * np.log(p_known) + (~k).sum() * np.log1p(-p_known))
        K.append(k)
    w = np.exp(np.array(logp) - max(logp))
    return (w / w.sum()) @ np.array(K, dtype=float)


def test_samplers_match_exact_posterior_on_a_tiny_world():
    w, known, paths = _agent(3, grid=8, n_walls=4, n_paths=2)
    m = Model(w, paths, 3.0)
    exact = _exact_marginals(m, 0.5)
    g = gibbs(m, np.random.default_rng(0), 0.5, sweeps=300, burn=20)
    np.testing.assert_allclose(g["p_known"], exact, atol=0.06)
    r = sis(m, np.random.default_rng(1), 400, 0.5, resample_move=True, moves=3)
    np.testing.assert_allclose(r["p_known"], exact, atol=0.1)
    plain = sis(m, np.random.default_rng(2), 400, 0.5, resample_move=False)
    np.testing.assert_allclose(plain["p_known"], exact, atol=0.1)   # 16 states: SIS is fine here
    assert 1.0 <= plain["ess_final"] <= 400


def test_ess_bounds():
    assert ess(np.zeros(10)) == pytest.approx(10)
    assert ess(np.array([0.0, -1e9, -1e9])) == pytest.approx(1)
