"""labyrinth mazes: the exact expert on tiny mazes solved by hand (plain, key and door, ice), the
generator's guarantees, distinct splits (ours and the official 3x3 sets), the official file
format, the observation, and bad inputs by their messages."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from stages.labyrinth.maze import (Maze, _shortest_path, encode, generate, make_splits, optimal_actions, optimal_length,
                                   parse_official, render_rgb, solve, transition)

FIXTURE = Path(__file__).parent / "fixtures" / "official_3x3.json"

# 3x3, row 0 on top. S at (2,0), E at (0,2). Drawn by hand:
#  -------------
#  |       | E |
#  |   + - +   |
#  |   |       |
#  |   +   + - |
#  | S     |   |
#  -------------
HAND = """labyrinth:
-------------
|       | E |
|   + - +   |
|   |       |
|   +   + - |
| S     |   |
-------------
end"""


def hand_maze(**kw) -> Maze:
    m = parse_official(HAND)
    return Maze(m.n, m.open_e, m.open_s, m.start, m.goal, **kw)


def test_parse_official_reads_walls_start_and_goal():
    m = parse_official(HAND)
    assert (m.n, m.start, m.goal) == (3, (2, 0), (0, 2))
    assert m.is_open((2, 0), 1) and not m.is_open((2, 1), 1)       # S -> (2,1) open; (2,1) | (2,2)
    assert m.is_open((2, 1), 0) and not m.is_open((1, 0), 1)       # (2,1) up to (1,1); (1,0) | (1,1)
    assert not m.is_open((0, 0), 0) and not m.is_open((2, 2), 2)   # the border


def test_shortest_path_by_hand():
    # S(2,0) -> (2,1) -> (1,1) -> (1,2) -> (0,2)=E : 4 steps; the left route is a dead end at (0,1)
    m = hand_maze()
    dist = solve(m)
    assert optimal_length(m) == 4
    assert dist[2, 1, 0] == 3 and dist[1, 1, 0] == 2 and dist[1, 2, 0] == 1 and dist[0, 2, 0] == 0
    assert optimal_actions(m, dist, (2, 0), 0) == [1]               # right
    assert optimal_actions(m, dist, (2, 1), 0) == [0]               # up
    assert optimal_actions(m, dist, (1, 2), 0) == [0]
    assert dist[0, 0, 0] == 6                                        # (0,0)->(1,0)->(2,0)->... = 2 + 4


def test_key_and_door_by_hand():
    # door at (1,1) on the only path; key at (0,1), reached by S -> (1,0) -> (0,0) -> (0,1):
    # 3 steps to the key, 3 back to (2,0)... the solver must find the detour: 3 + 4 + 3 = 10? No:
    # from (0,1) back to (0,0),(1,0),(2,0),(2,1),(1,1),(1,2),(0,2) = 7; total 3 + 7 = 10.
    m = hand_maze(key=(0, 1), door=(1, 1))
    assert optimal_length(m) == 10
    dist = solve(m)
    assert dist[2, 1, 1] == 3                                        # with the key, the short way
    assert optimal_actions(m, dist, (2, 0), 0) == [0]               # without it, up towards the key
    assert transition(m, (2, 1), 0, 0) == ((2, 1), 0, None)         # the door stays shut
    assert transition(m, (0, 0), 0, 1) == ((0, 1), 1, None)         # the key is picked up
    assert transition(m, (2, 1), 1, 0) == ((1, 1), 1, None)         # and opens the door


def test_ice_is_avoided_and_ends_the_episode():
    # open (2,1)|(2,2) and (2,2)-(1,2): a second path S,(2,1),(2,2),(1,2),E, 4 steps too; ice on (1,1)
    m0 = hand_maze()
    oe, os_ = m0.open_e.copy(), m0.open_s.copy()
    oe[2, 1] = os_[1, 2] = True
    m = Maze(3, oe, os_, m0.start, m0.goal, ice=((1, 1),))
    dist = solve(m)
    assert optimal_length(m) == 4 and dist[1, 1, 0] == -1
    assert optimal_actions(m, dist, (2, 1), 0) == [1]               # right, not up onto the ice
    assert transition(m, (2, 1), 0, 0)[2] == "ice"


def test_generated_mazes_follow_the_official_rules():
    rng = np.random.default_rng(0)
    for _ in range(10):
        kd = generate(6, "key_door", rng)
        closed = (~kd.open_e).sum() + (~kd.open_s).sum()
        assert closed == 2 * 6 * 5 - (36 - 1)                       # a perfect maze: n^2 - 1 passages
        assert optimal_length(kd) > optimal_length(Maze(6, kd.open_e, kd.open_s, kd.start, kd.goal)) > 0
        ice = generate(6, "ice", rng)
        assert ice.ice and optimal_length(ice) > 0                   # an ice-free path exists
        plain = Maze(6, ice.open_e, ice.open_s, ice.start, ice.goal)
        assert set(ice.ice) <= set(_shortest_path(plain))            # the ice sits on a shortest path
        assert optimal_length(ice) >= optimal_length(plain)


def test_splits_have_distinct_structures_and_small_families_raise():
    sp = make_splits(5, "base", {"train": 30, "eval": 30, "test": 30}, np.random.default_rng(1))
    hashes = [{m.structure_hash() for m in sp[k]} for k in ("train", "eval", "test")]
    assert all(len(h) == 30 for h in hashes)
    assert not (hashes[0] & hashes[1]) and not (hashes[0] & hashes[2]) and not (hashes[1] & hashes[2])
    with pytest.raises(RuntimeError, match="distinct 3x3 base structures"):
        make_splits(3, "base", {"train": 40, "test": 40}, np.random.default_rng(0), loop_fraction=0.0, max_tries=5)


def test_official_3x3_sets_are_disjoint_and_solvable():
    data = json.loads(FIXTURE.read_text())["splits"]
    hashes = {}
    for split, texts in data.items():
        mazes = [parse_official(t) for t in texts.values()]
        hashes[split] = {m.structure_hash() for m in mazes}
        assert len(hashes[split]) == len(mazes) == 32
        assert all(optimal_length(m) >= 4 for m in mazes)             # Manhattan distance S -> E
    assert not (hashes["train"] & hashes["eval"]) and not (hashes["train"] & hashes["test"])
    assert not (hashes["eval"] & hashes["test"])


def test_structure_hash_ignores_items_task_hash_does_not():
    a, b = hand_maze(), hand_maze(key=(0, 1), door=(1, 1))
    assert a.structure_hash() == b.structure_hash() and a.task_hash() != b.task_hash()
    assert Maze.from_dict(json.loads(json.dumps(b.to_dict()))).task_hash() == b.task_hash()


def test_encode_partial_view_hides_far_cells_but_not_the_goal():
    m = generate(6, "base", np.random.default_rng(3))
    full, part = encode(m, (0, 0), 0), encode(m, (0, 0), 0, view_radius=1)
    assert full.shape == (12, 6, 6) and full[11].all()
    assert part[11].sum() == 4 and part[5][m.goal] == 1 and part[:4, 5, 5].sum() == 0
    assert np.array_equal(part[:4, :2, :2], full[:4, :2, :2])
    img = render_rgb(m, (0, 0), 0, view_radius=1)
    assert img.shape == (97, 97, 3) and img.dtype == np.uint8


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="variant must be one of"):
        generate(5, "lava", np.random.default_rng(0))
    with pytest.raises(ValueError, match="open_e must be"):
        Maze(3, np.zeros((3, 3), bool), np.zeros((2, 3), bool))
    with pytest.raises(ValueError, match="key and door come together"):
        hand_maze(key=(0, 1))
    with pytest.raises(ValueError, match="no 'labyrinth:'"):
        parse_official("not a maze")
    with pytest.raises(ValueError, match="action must be 0..3"):
        hand_maze().is_open((0, 0), 7)


def test_solver_agrees_with_scipy_shortest_paths():
    from benchmarks.labyrinth.bfs import scipy_solve

    rng = np.random.default_rng(7)
    for variant in ("base", "key_door", "ice"):
        for _ in range(3):
            m = generate(5, variant, rng)
            assert np.array_equal(solve(m), scipy_solve(m))
