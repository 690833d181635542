"""Voxel table-top scenes for the dyna_rend stand-in (numpy only).

A scene is a grid of ``X x Y x Z`` voxels above a table: ``occ`` (bool, X, Y, Z) and ``rgb`` (float,
X, Y, Z, 3). Blocks are single voxels of distinct colours, some stacked (at most ``Z - 1`` high).
Two tasks share the scenes:

- ``stack`` (the downstream task): "put A on B" names two top-of-column blocks by colour; the
  future scene has A moved onto B, and the action target is the voxel A lands in (B's column, one
  above B).
- ``push`` (the pre-training videos): "push A towards d" names one top-of-column block and one of
  four directions; A slides one cell that way and falls onto the neighbouring column. Its future
  never puts a block on another named block, so the pretext's target does not contain the
  stacking task's label (the place voxel).

An instruction is stored as (A, B, d): stack (A, B, -1), push (A, -1, d).
Perturbations (the Colosseum analogue): distractor blocks in colours never seen in training, a
table of another colour, and dimmer lighting (every colour times a factor).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Training colours (the instruction names them) and the two distractor colours of the perturbation.
PALETTE = np.array([[0.90, 0.10, 0.10], [0.10, 0.75, 0.15], [0.15, 0.25, 0.90],
                    [0.90, 0.85, 0.10], [0.80, 0.15, 0.80]], dtype=np.float32)
UNSEEN = np.array([[0.10, 0.80, 0.80], [1.00, 0.50, 0.00]], dtype=np.float32)
TABLE = np.array([0.50, 0.50, 0.50], dtype=np.float32)
TABLE_PERTURBED = np.array([0.40, 0.28, 0.16], dtype=np.float32)
PERTURBATIONS = ("none", "distractors", "table", "lighting")
TASKS = ("stack", "push")
DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1))     # +x, -x, +y, -y


@dataclass(frozen=True)
class Grid:
    x: int
    y: int
    z: int

    @property
    def n(self) -> int:
        return self.x * self.y * self.z

    def flat(self, x, y, z):
        return (np.asarray(x) * self.y + np.asarray(y)) * self.z + np.asarray(z)


def _place(rng, heights, grid: Grid, stack_p: float, allow_stack: bool):
    """A free (x, y, z) for one more block: on top of a column with probability ``stack_p``."""
    tops = np.argwhere((heights > 0) & (heights < grid.z - 1))
    if allow_stack and len(tops) and rng.random() < stack_p:
        x, y = tops[rng.integers(len(tops))]
    else:
        free = np.argwhere(heights == 0)
        x, y = free[rng.integers(len(free))]
    return int(x), int(y), int(heights[x, y])


def make_scene(rng, grid: Grid, n_blocks: int, stack_p: float, perturbation: str = "none",
               lighting: float = 0.7, n_distractors: int = 2, task: str = "stack"):
    """One scene: (occ, rgb, occ_future, rgb_future, instruction (a, b, d), target flat index (the
    voxel A lands in), table colour). Blocks have distinct colours of PALETTE; the first two stand
    on the table. ``task`` "stack" draws exactly what it drew before push scenes existed."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if perturbation not in PERTURBATIONS:
        raise ValueError(f"perturbation must be one of {PERTURBATIONS}, got {perturbation!r}")
    if not 2 <= n_blocks <= len(PALETTE):
        raise ValueError(f"n_blocks must be in [2, {len(PALETTE)}], got {n_blocks}")
    heights = np.zeros((grid.x, grid.y), dtype=np.int64)
    occ = np.zeros((grid.x, grid.y, grid.z), dtype=bool)
    rgb = np.zeros((grid.x, grid.y, grid.z, 3), dtype=np.float32)
    colours = rng.permutation(len(PALETTE))[:n_blocks]
    where = {}
    for i, c in enumerate(colours):
        x, y, z = _place(rng, heights, grid, stack_p, allow_stack=i >= 2)
        occ[x, y, z], rgb[x, y, z] = True, PALETTE[c]
        heights[x, y] += 1
        where[int(c)] = (x, y, z)
    tops = [c for c, (x, y, z) in where.items() if heights[x, y] == z + 1]
    if task == "push":
        return _push(rng, grid, occ, rgb, heights, where, tops, perturbation, lighting)
    room = [c for c in tops if heights[where[c][:2]] < grid.z]
    a = int(rng.choice(tops))
    bs = [c for c in room if c != a and where[c][:2] != where[a][:2]]
    b = int(rng.choice(bs))
    if perturbation == "distractors":
        for c in UNSEEN[:n_distractors]:
            x, y, z = _place(rng, heights, grid, 0.0, allow_stack=False)
            occ[x, y, z], rgb[x, y, z] = True, c
            heights[x, y] += 1
    ax, ay, az = where[a]
    bx, by, _ = where[b]
    tz = int(heights[bx, by])
    occ_f, rgb_f = occ.copy(), rgb.copy()
    occ_f[ax, ay, az], rgb_f[ax, ay, az] = False, 0.0
    occ_f[bx, by, tz], rgb_f[bx, by, tz] = True, PALETTE[a]
    table = TABLE_PERTURBED if perturbation == "table" else TABLE
    if perturbation == "lighting":
        rgb, rgb_f, table = rgb * lighting, rgb_f * lighting, table * lighting
    return occ, rgb, occ_f, rgb_f, (a, b, -1), int(grid.flat(bx, by, tz)), table.astype(np.float32)


def _push(rng, grid: Grid, occ, rgb, heights, where, tops, perturbation: str, lighting: float):
    """A push scene's future: a top block A slides one cell in a direction d (one whose neighbouring
    cell is on the table and whose column is no higher than A, so nothing blocks the slide) and
    falls onto the top of that column."""
    moves = []
    for c in tops:
        ax, ay, az = where[c]
        for d, (dx, dy) in enumerate(DIRECTIONS):
            nx, ny = ax + dx, ay + dy
            if 0 <= nx < grid.x and 0 <= ny < grid.y and heights[nx, ny] <= az:
                moves.append((c, d))
    a, d = moves[rng.integers(len(moves))]
    ax, ay, az = where[a]
    nx, ny = ax + DIRECTIONS[d][0], ay + DIRECTIONS[d][1]
    tz = int(heights[nx, ny])
    occ_f, rgb_f = occ.copy(), rgb.copy()
    occ_f[ax, ay, az], rgb_f[ax, ay, az] = False, 0.0
    occ_f[nx, ny, tz], rgb_f[nx, ny, tz] = True, PALETTE[a]
    table = TABLE_PERTURBED if perturbation == "table" else TABLE
    if perturbation == "lighting":
        rgb, rgb_f, table = rgb * lighting, rgb_f * lighting, table * lighting
    return occ, rgb, occ_f, rgb_f, (int(a), -1, int(d)), int(grid.flat(nx, ny, tz)), table.astype(np.float32)


def make_set(seed_seq, n: int, grid: Grid, n_blocks: int, stack_p: float, perturbation: str = "none",
             lighting: float = 0.7, task: str = "stack"):
    """``n`` scenes as stacked arrays (occ, rgb, occ_f, rgb_f: N, X, Y, Z[, 3]; instr: N, 3 (A, B, d),
    -1 where unused; target: N; table: N, 3)."""
    rng = np.random.default_rng(seed_seq)
    rows = [make_scene(rng, grid, n_blocks, stack_p, perturbation, lighting, task=task) for _ in range(n)]
    occ, rgb, occ_f, rgb_f, instr, target, table = zip(*rows)
    return {"occ": np.stack(occ), "rgb": np.stack(rgb), "occ_f": np.stack(occ_f), "rgb_f": np.stack(rgb_f),
            "instr": np.array(instr, dtype=np.int64), "target": np.array(target, dtype=np.int64),
            "table": np.stack(table)}
