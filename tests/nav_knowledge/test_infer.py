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


def test_static_navigator_ignores_what_it_sees():
    """The control's model: one segment per trajectory whose field is the knowledge set's alone,
    where the replanning model adds the walls seen on the way (more segments, other fields)."""
    from stages.nav_knowledge.planner import dijkstra

    w, known, paths = _agent(5)
    rep, static = Model(w, paths, 3.0), Model(w, paths, 3.0, replanning=False)
    assert len(static.row_traj) == len(paths) and not static.row_seen.any()
    assert len(rep.row_traj) > len(paths)                       # this agent saw walls on the way
    s = static.state(known)
    for k, p in enumerate(paths):
        assert np.array_equal(s.mat[k, :-1], np.array(dijkstra(w.nbrs, w.blocked(known), p[-1])))
    assert static.n_steps == rep.n_steps and np.array_equal(static.cand, rep.cand)
    assert not np.allclose(s.ll, rep.state(known).ll)           # the two likelihoods differ
    flipped = static.flipped(s, 0)
    np.testing.assert_allclose(flipped.ll, static.state(flipped.known).ll, rtol=0, atol=1e-12)


def test_static_navigator_reads_a_detour_as_knowledge():
    """A corridor 3 cells high, a wall across its middle two rows. The agent walks straight at it
    (it did not know the wall), sees it, and goes round: the replanning model explains the walk
    best without the wall known; the static model, which cannot use the sighting, prefers it
    known (the detour is then planned from the start)."""
    H, W = 3, 7
    cell_wall = np.full(H * W, -1)
    cell_wall[[0 * W + 3, 1 * W + 3]] = 0                      # wall on rows 0-1 of column 3
    world = World(H, W, cell_wall, [[3, W + 3]], grid_neighbours(H, W))
    path = [W + 0, W + 1, W + 2, 2 * W + 2, 2 * W + 3, 2 * W + 4, W + 4, W + 5, W + 6]
    rep, static = Model(world, [path], 3.0), Model(world, [path], 3.0, replanning=False)
    ll = {(name, k): m.state(np.array([k])).ll.sum() for name, m in (("rep", rep), ("static", static))
          for k in (False, True)}
    assert ll[("rep", False)] > ll[("rep", True)]
    assert ll[("static", True)] > ll[("static", False)]


def test_prior_mixture_and_point_masses_in_predictive_nll():
    """A mixture of one state repeated is that state's NLL; a mixture's NLL lies between its
    components' (log-sum-exp of weighted probabilities)."""
    w, known, paths = _agent(11)
    one = predictive_nll(w, paths[:1], 3.0, known[None], np.ones(1))
    assert predictive_nll(w, paths[:1], 3.0, np.repeat(known[None], 5, 0), np.full(5, 0.2)) == pytest.approx(one)
    other = ~known
    two = predictive_nll(w, paths[:1], 3.0, other[None], np.ones(1))
    mix = predictive_nll(w, paths[:1], 3.0, np.stack([known, other]), np.array([0.5, 0.5]))
    assert min(one, two) - 1e-12 <= mix <= max(one, two) + 1e-12
    assert mix == pytest.approx(-np.log(0.5 * np.exp(-one) + 0.5 * np.exp(-two)))
