"""World generation and the simulated agent."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import label

from stages.nav_knowledge.world import make_world, observe, pick_start_goal, simulate


def test_walls_do_not_overlap_or_disconnect():
    w = make_world(np.random.default_rng(0), 12, 12, 12, (2, 4))
    cells = [c for seg in w.wall_cells for c in seg]
    assert len(cells) == len(set(cells)) and (w.cell_wall >= 0).sum() == len(cells)
    assert label((w.cell_wall < 0).reshape(12, 12))[1] == 1
    for k, seg in enumerate(w.wall_cells):
        assert 2 <= len(seg) <= 4 and (w.cell_wall[seg] == k).all()


def test_impossible_world_refused():
    with pytest.raises(ValueError, match="could not place 50 wall segments on a 4x4 grid"):
        make_world(np.random.default_rng(0), 4, 4, 50, (3, 4), max_tries=200)


def test_agent_reaches_goal_and_learns_what_it_sees():
    rng = np.random.default_rng(1)
    w = make_world(rng, 12, 12, 10, (2, 4))
    s, g = pick_start_goal(rng, w, 10)
    out = simulate(w, np.zeros(w.n_walls, bool), s, g, 20.0, rng, 500)
    assert out["reached"] and out["path"][0] == s and out["path"][-1] == g
    blocked = w.true_blocked()
    assert not any(blocked[c] for c in out["path"])
    assert all(b in w.nbrs[a] for a, b in zip(out["path"], out["path"][1:]))
    seen = np.zeros(w.n_walls, bool)
    for c in out["path"]:
        observe(w, c, seen)
    assert len(out["replans"]) <= seen.sum()      # one replan per sighting step at most
