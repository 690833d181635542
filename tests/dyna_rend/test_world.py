"""Scene invariants: the instruction, the future scene, the target and the perturbations."""
from __future__ import annotations

import numpy as np
import pytest

from stages.dyna_rend.world import DIRECTIONS, PALETTE, UNSEEN, Grid, make_scene, make_set

G = Grid(8, 8, 4)


def test_future_moves_a_onto_b_and_target_is_where_a_lands():
    s = make_set(np.random.SeedSequence(0), 50, G, 4, 0.3)
    for i in range(50):
        occ, occ_f = s["occ"][i], s["occ_f"][i]
        a, b, d = s["instr"][i]
        assert d == -1
        t = np.unravel_index(s["target"][i], (G.x, G.y, G.z))
        assert occ.sum() == occ_f.sum() == 4
        assert not occ[t] and occ_f[t]
        assert np.allclose(s["rgb_f"][i][t], PALETTE[a])
        below = (t[0], t[1], t[2] - 1)
        assert np.allclose(s["rgb"][i][below], PALETTE[b])                  # A lands on B
        where_a = np.argwhere(np.all(np.isclose(s["rgb"][i], PALETTE[a]), axis=-1) & occ)
        assert len(where_a) == 1 and not occ_f[tuple(where_a[0])]           # and leaves its place
        x, y, z = where_a[0]
        assert not occ[x, y, z + 1:].any()                                  # A was on top of its column
    assert (s["occ"][:, :, :, 1:].any(axis=(1, 2, 3))).mean() > 0.2         # some stacks


def test_push_slides_a_one_cell_and_never_shows_a_stacking_target():
    s = make_set(np.random.SeedSequence(0), 200, G, 4, 0.3, task="push")
    assert (s["instr"][:, 1] == -1).all() and set(s["instr"][:, 2]) == {0, 1, 2, 3}
    for i in range(200):
        occ, occ_f = s["occ"][i], s["occ_f"][i]
        a, _, d = s["instr"][i]
        where_a = np.argwhere(np.all(np.isclose(s["rgb"][i], PALETTE[a]), axis=-1) & occ)
        (x, y, z), = where_a
        assert not occ[x, y, z + 1:].any() and not occ_f[x, y, z]          # a top block leaves its place
        nx, ny = x + DIRECTIONS[d][0], y + DIRECTIONS[d][1]
        t = np.unravel_index(s["target"][i], (G.x, G.y, G.z))
        assert t[:2] == (nx, ny) and occ_f[t] and not occ[t]                 # one cell towards d
        assert t[2] <= z and (t[2] == 0 or occ[nx, ny, t[2] - 1])           # it falls onto that column
        assert occ_f.sum() == occ.sum() == 4


def test_stack_scenes_unchanged_by_the_push_task():
    a = make_set(np.random.SeedSequence(3), 20, G, 4, 0.3)
    b = make_set(np.random.SeedSequence(3), 20, G, 4, 0.3, task="stack")
    assert all(np.array_equal(a[k], b[k]) for k in a)
    with pytest.raises(ValueError, match="task must be one of"):
        make_scene(np.random.default_rng(0), G, 4, 0.3, task="pull")


def test_perturbations():
    rng = lambda: np.random.default_rng(5)  # noqa: E731
    base = make_scene(rng(), G, 4, 0.3)
    dis = make_scene(rng(), G, 4, 0.3, "distractors")
    assert dis[0].sum() == base[0].sum() + 2
    cols = dis[1][dis[0]]
    assert sum(np.all(np.isclose(cols, u), axis=1).sum() for u in UNSEEN) == 2
    light = make_scene(rng(), G, 4, 0.3, "lighting", lighting=0.7)
    assert np.allclose(light[1], base[1] * 0.7) and np.allclose(light[6], base[6] * 0.7)
    table = make_scene(rng(), G, 4, 0.3, "table")
    assert not np.allclose(table[6], base[6]) and np.array_equal(table[0], base[0])


def test_bad_inputs():
    with pytest.raises(ValueError, match="perturbation must be one of"):
        make_scene(np.random.default_rng(0), G, 4, 0.3, "fog")
    with pytest.raises(ValueError, match="n_blocks must be in"):
        make_scene(np.random.default_rng(0), G, 6, 0.3)
