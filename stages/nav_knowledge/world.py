"""Gridworlds with wall segments, an agent's partial knowledge of them, and its navigation.

* A world is an ``H x W`` grid with ``n_walls`` straight wall segments (each 1 cell thick,
  ``wall_len`` cells long, horizontal or vertical, never overlapping, never cutting the free
  cells into two parts). ``cell_wall[u]`` is the segment covering cell ``u`` or -1.
* The agent knows a random subset of the segments (each with probability ``p_known``).
* Navigation model (the one inference inverts): the agent believes the segments it knows or
  has seen are walls and every other cell is free (optimistic planning). At each position it
  first observes the 4 neighbouring cells (a segment touching one becomes known, whole), replans
  its distance-to-goal field (incrementally, :func:`stages.nav_knowledge.planner.repair`),
  then steps to a free neighbour ``v`` with probability proportional to
  ``exp(-beta * d_belief(v))`` (noisy-rational: softmax over next-step cost-to-go).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .planner import dijkstra, grid_neighbours, repair


@dataclass
class World:
    H: int
    W: int
    cell_wall: np.ndarray            # (H*W,) int, segment index or -1
    wall_cells: list[list[int]]      # cells of each segment
    nbrs: list[tuple[int, ...]]

    @property
    def n_walls(self) -> int:
        return len(self.wall_cells)

    def blocked(self, walls_on: np.ndarray) -> list[bool]:
        """Cell mask (list of bools) of the segments flagged in ``walls_on`` (n_walls,)."""
        ext = np.append(np.asarray(walls_on, dtype=bool), False)
        return ext[self.cell_wall].tolist()

    def true_blocked(self) -> list[bool]:
        return (self.cell_wall >= 0).tolist()


def load_world(agent: dict):
    """The World of one stored agent (an entry of worlds.json's ``agents``)."""
    cw = np.asarray(agent["cell_wall"], dtype=np.int64)
    cells = [np.flatnonzero(cw == k).tolist() for k in range(int(cw.max()) + 1)]
    return World(agent["H"], agent["W"], cw, cells, grid_neighbours(agent["H"], agent["W"]))


def _connected(free: np.ndarray) -> bool:
    """Whether the free cells (an H x W bool mask) form one 4-connected component."""
    from scipy.ndimage import label

    return label(free)[1] == 1


def make_world(rng: np.random.Generator, H: int, W: int, n_walls: int, wall_len: tuple[int, int],
               max_tries: int = 2000) -> World:
    """Place ``n_walls`` segments at random (lengths uniform in ``wall_len``); a segment that
    overlaps another, or disconnects the free cells, is redrawn (at most ``max_tries`` draws)."""
    nbrs = grid_neighbours(H, W)
    cell_wall = np.full(H * W, -1, dtype=np.int64)
    walls: list[list[int]] = []
    tries = 0
    while len(walls) < n_walls:
        tries += 1
        if tries > max_tries:
            raise ValueError(f"could not place {n_walls} wall segments on a {H}x{W} grid "
                             f"(placed {len(walls)} in {max_tries} draws); use fewer or shorter walls")
        L = int(rng.integers(wall_len[0], wall_len[1] + 1))
        if rng.random() < 0.5:
            r, c = int(rng.integers(0, H)), int(rng.integers(0, W - L + 1))
            cells = [r * W + c + k for k in range(L)]
        else:
            r, c = int(rng.integers(0, H - L + 1)), int(rng.integers(0, W))
            cells = [(r + k) * W + c for k in range(L)]
        if (cell_wall[cells] >= 0).any():
            continue
        trial = cell_wall.copy()
        trial[cells] = len(walls)
        if not _connected((trial < 0).reshape(H, W)):
            continue
        cell_wall = trial
        walls.append(cells)
    return World(H, W, cell_wall, walls, nbrs)


def pick_start_goal(rng: np.random.Generator, world: World, min_dist: int) -> tuple[int, int]:
    """A free start and goal at least ``min_dist`` moves apart in the true world."""
    free = np.flatnonzero(world.cell_wall < 0)
    blocked = world.true_blocked()
    for _ in range(1000):
        goal = int(rng.choice(free))
        d = np.asarray(dijkstra(world.nbrs, blocked, goal))
        far = free[d[free] >= min_dist]
        if far.size:
            return int(rng.choice(far)), goal
    raise ValueError(f"no start/goal pair {min_dist} moves apart on a {world.H}x{world.W} grid")


def observe(world: World, pos: int, seen: np.ndarray) -> list[int]:
    """Mark the segments touching ``pos``'s neighbours as seen; return the newly seen ones."""
    new = []
    for v in world.nbrs[pos]:
        w = int(world.cell_wall[v])
        if w >= 0 and not seen[w]:
            seen[w] = True
            new.append(w)
    return new


def simulate(world: World, known: np.ndarray, start: int, goal: int, beta: float,
             rng: np.random.Generator, max_steps: int) -> dict:
    """Walk the noisy-rational optimistic agent from ``start`` to ``goal``.

    Returns ``path`` (cells visited, start first), ``replans`` (list of (field before, cells that
    became walls, blocked after) for every belief change: what the replanning benchmark replays)
    and ``reached``.
    """
    belief = np.asarray(known, dtype=bool).copy()
    observe(world, start, belief)
    blocked = world.blocked(belief)
    dist = dijkstra(world.nbrs, blocked, goal)
    true_blocked = world.true_blocked()
    path = [start]
    replans = []
    pos = start
    for _ in range(max_steps):
        if pos == goal:
            break
        cands = [v for v in world.nbrs[pos] if not true_blocked[v]]
        logits = -beta * np.array([dist[v] for v in cands])
        p = np.exp(logits - logits.max())
        pos = cands[int(rng.choice(len(cands), p=p / p.sum()))]
        path.append(pos)
        new = observe(world, pos, belief)
        if new:
            changed = [c for w in new for c in world.wall_cells[w]]
            before = list(dist)
            for c in changed:
                blocked[c] = True
            repair(world.nbrs, blocked, goal, dist, changed)
            replans.append((before, changed, list(blocked)))
    return {"path": path, "replans": replans, "reached": pos == goal}
