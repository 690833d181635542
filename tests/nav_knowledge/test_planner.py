"""Distance fields: Dijkstra from scratch against scipy's and a hand-worked grid; the incremental
LPA* repair gives exactly the from-scratch field after walls are added and removed."""
from __future__ import annotations

import numpy as np
import pytest

from stages.nav_knowledge.planner import INF, block_update, dijkstra, grid_neighbours, lpa_update, repair, scipy_field


def test_hand_worked_3x3_with_centre_wall():
    nb = grid_neighbours(3, 3)
    blocked = [False] * 9
    blocked[4] = True
    d = dijkstra(nb, blocked, 0)
    # 0 1 2 / 1 # 3 / 2 3 4: the far corner goes round the wall
    assert d == [0, 1, 2, 1, INF, 3, 2, 3, 4]


def test_neighbours_of_a_corner_and_bad_size():
    nb = grid_neighbours(2, 3)
    assert sorted(nb[0]) == [1, 3] and sorted(nb[4]) == [1, 3, 5]
    with pytest.raises(ValueError, match="grid must be at least 1x1, got 0x3"):
        grid_neighbours(0, 3)


@pytest.mark.parametrize("seed", range(5))
def test_dijkstra_equals_scipy(seed):
    rng = np.random.default_rng(seed)
    H, W = 9, 13
    blocked = (rng.random(H * W) < 0.3).tolist()
    goal = int(rng.integers(H * W))
    blocked[goal] = False
    ours = np.array(dijkstra(grid_neighbours(H, W), blocked, goal))
    assert np.array_equal(ours, scipy_field(H, W, blocked, goal))


@pytest.mark.parametrize("seed", range(10))
def test_incremental_equals_from_scratch(seed):
    rng = np.random.default_rng(100 + seed)
    H, W = int(rng.integers(3, 15)), int(rng.integers(3, 15))
    nb = grid_neighbours(H, W)
    goal = int(rng.integers(H * W))
    blocked = (rng.random(H * W) < 0.25).tolist()
    blocked[goal] = False
    d = dijkstra(nb, blocked, goal)
    for _ in range(8):                    # add and remove walls, several cells at once
        changed = [int(c) for c in rng.choice(H * W, size=int(rng.integers(1, 5)), replace=False) if c != goal]
        for c in changed:
            blocked[c] = not blocked[c]
        lpa_update(nb, blocked, goal, d, changed)
        assert d == dijkstra(nb, blocked, goal)


def test_incremental_touches_only_what_changes():
    nb = grid_neighbours(20, 20)
    blocked = [False] * 400
    d = dijkstra(nb, blocked, 0)
    blocked[399] = True                   # a wall in the far corner changes one cell only
    assert lpa_update(nb, blocked, 0, d, [399]) == 1
    assert d[399] == INF and d[398] == 37.0


def test_blocked_goal_refused():
    nb = grid_neighbours(3, 3)
    blocked = [False] * 9
    d = dijkstra(nb, blocked, 4)
    blocked[4] = True
    with pytest.raises(ValueError, match="the goal cell 4 is blocked"):
        lpa_update(nb, blocked, 4, d, [4])


@pytest.mark.parametrize("seed", range(10))
def test_two_phase_wall_insertion_equals_from_scratch(seed):
    rng = np.random.default_rng(200 + seed)
    H, W = int(rng.integers(3, 15)), int(rng.integers(3, 15))
    nb = grid_neighbours(H, W)
    goal = int(rng.integers(H * W))
    blocked = (rng.random(H * W) < 0.2).tolist()
    blocked[goal] = False
    d = dijkstra(nb, blocked, goal)
    for _ in range(6):
        free = [c for c in range(H * W) if not blocked[c] and c != goal]
        changed = [int(c) for c in rng.choice(free, size=min(len(free), 3), replace=False)]
        for c in changed:
            blocked[c] = True
        block_update(nb, blocked, goal, d, changed)
        assert d == dijkstra(nb, blocked, goal)
        back = changed[:1]                 # and remove one again through the dispatcher
        blocked[back[0]] = False
        repair(nb, blocked, goal, d, back)
        assert d == dijkstra(nb, blocked, goal)


def test_two_phase_refuses_a_free_cell():
    nb = grid_neighbours(3, 3)
    blocked = [False] * 9
    d = dijkstra(nb, blocked, 0)
    with pytest.raises(ValueError, match="cell 4 is not a wall; use lpa_update"):
        block_update(nb, blocked, 0, d, [4])


def test_wall_cutting_a_corridor_makes_the_far_side_unreachable():
    nb = grid_neighbours(1, 5)
    blocked = [False] * 5
    d = dijkstra(nb, blocked, 0)
    blocked[2] = True
    assert block_update(nb, blocked, 0, d, [2]) == 3
    assert d == [0, 1, INF, INF, INF]


@pytest.mark.parametrize("seed", [1000, 1001])
def test_every_benchmark_event_is_repaired_exactly(seed):
    """What the retired ledger row replan_identical measured, as a test of the code: every
    replanning event of the benchmark's walks, replayed with the two-phase repair and with LPA*
    alone, gives the from-scratch field of our Dijkstra and of scipy's, inf included (on sides 24
    and 40: the pure-Python search takes 20 s a seed at the benchmark's 64)."""
    from stages.nav_knowledge.params import ReplanParams
    from stages.nav_knowledge.replan import bench_size, events_for

    rp = ReplanParams(sizes=[24, 64], wall_frac=0.12, wall_len=[3, 10], p_known=0.5, max_events=12, repeats=1)
    for size in (24, 40):
        _, events = events_for(size, rp, seed)
        assert events
        r = bench_size(size, rp, seed)
        assert r["identical"] and r["events"] == len(events)


def test_a_wrong_repair_is_caught_by_the_benchmark(monkeypatch):
    """The benchmark's exactness check can fail: a repair that leaves the field as it was is
    reported not identical, and the stage's seed run stops on it."""
    import stages.nav_knowledge.planner as planner
    from stages.nav_knowledge.params import ReplanParams
    from stages.nav_knowledge.replan import run_seed

    rp = ReplanParams(sizes=[64], wall_frac=0.12, wall_len=[3, 10], p_known=0.5, max_events=2, repeats=1)
    monkeypatch.setattr(planner, "repair", lambda nbrs, blocked, goal, dist, changed: 0)
    with pytest.raises(RuntimeError, match="differs from the from-scratch one at grid sides \\[64\\]"):
        run_seed(rp, 1000)
