"""Labyrinth mazes: structure generation, the three variants, dynamics, the exact expert (BFS) and
the observation encoding. Pure numpy; no torch, no gymnasium (env.py wraps this in gymnasium's API).

Mechanics follow the official environment (github.com/NathanGavenski/Labyrinth,
src/labyrinth/labyrinth.py; read, not copied):
- an n x n grid of cells; passages carved by a depth-first (recursive backtracker) walk, then extra
  walls opened so that more than one path may exist (the official ``random_amount``);
- start (0, 0) and goal (n-1, n-1) by default (official default: start (0, 0), end (shape-1, shape-1));
- four actions; walking into a wall spends the step and leaves the agent in place;
- reward 1 at the goal, -0.1 / n^2 for any other step, -100 for stepping on ice (official values);
- key and door: a perfect maze (one path, official ``max_paths=1``); the door lies on the start-goal
  path, the key off it; the door cell cannot be entered without the key;
- ice floor: at least two paths (official ``min_paths=2``); ice lies on the shortest path only, so
  an ice-free path always exists; stepping on ice ends the episode (the ice breaks; official
  ``set_ice_floors`` and ``step``);
- partial observability: the agent sees a (2r+1) x (2r+1) window around itself; goal and start
  stay visible (official occlusion masks by line of sight and keeps start and goal visible: ours is
  a local-view stand-in for it).

Coordinates: a cell is (row, col), row 0 at the top. Actions: 0 up, 1 right, 2 down, 3 left.
"""
from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import dataclass, field

import numpy as np

VARIANTS = ("base", "partial", "key_door", "ice")
ACTIONS = ((-1, 0), (0, 1), (1, 0), (0, -1))           # up, right, down, left
N_CHANNELS = 12
STEP_PENALTY = -0.1          # divided by n^2, official
ICE_REWARD = -100.0


@dataclass(frozen=True)
class Maze:
    """One maze. ``open_e[r, c]``: passage between (r, c) and (r, c+1); ``open_s[r, c]``: between
    (r, c) and (r+1, c). ``key``/``door`` are None unless the key-and-door variant; ``ice`` is the
    set of ice cells (empty unless the ice variant)."""
    n: int
    open_e: np.ndarray = field(repr=False)
    open_s: np.ndarray = field(repr=False)
    start: tuple[int, int] = (0, 0)
    goal: tuple[int, int] | None = None
    key: tuple[int, int] | None = None
    door: tuple[int, int] | None = None
    ice: tuple[tuple[int, int], ...] = ()

    def __post_init__(self):
        n = self.n
        if n < 2:
            raise ValueError(f"a maze needs n >= 2 cells a side, got n={n}")
        if self.open_e.shape != (n, n - 1) or self.open_s.shape != (n - 1, n):
            raise ValueError(f"open_e must be {(n, n - 1)} and open_s {(n - 1, n)}, got "
                             f"{self.open_e.shape} and {self.open_s.shape}")
        if self.goal is None:
            object.__setattr__(self, "goal", (n - 1, n - 1))
        for name in ("start", "goal", "key", "door"):
            cell = getattr(self, name)
            if cell is not None and not (0 <= cell[0] < n and 0 <= cell[1] < n):
                raise ValueError(f"{name} {cell} lies outside the {n}x{n} maze")
        if (self.key is None) != (self.door is None):
            raise ValueError("key and door come together: give both or neither")

    # ---- structure ------------------------------------------------------------------------
    def is_open(self, cell: tuple[int, int], action: int) -> bool:
        """Whether a passage leads from ``cell`` in direction ``action`` (no wall, inside the grid)."""
        r, c = cell
        if action == 0:
            return r > 0 and bool(self.open_s[r - 1, c])
        if action == 1:
            return c < self.n - 1 and bool(self.open_e[r, c])
        if action == 2:
            return r < self.n - 1 and bool(self.open_s[r, c])
        if action == 3:
            return c > 0 and bool(self.open_e[r, c - 1])
        raise ValueError(f"action must be 0..3, got {action}")

    def structure_hash(self) -> str:
        """Canonical hash of the walls alone (the official environment hashes its edge list the
        same way): two mazes with equal walls hash equal whatever their start, goal or items."""
        h = hashlib.sha256(f"labyrinth-structure:{self.n}".encode())
        h.update(np.ascontiguousarray(self.open_e, dtype=np.uint8).tobytes())
        h.update(np.ascontiguousarray(self.open_s, dtype=np.uint8).tobytes())
        return h.hexdigest()[:16]

    def task_hash(self) -> str:
        """Hash of the whole task: walls, start, goal, key, door and ice."""
        h = hashlib.sha256(self.structure_hash().encode())
        h.update(repr((self.start, self.goal, self.key, self.door, tuple(sorted(self.ice)))).encode())
        return h.hexdigest()[:16]

    # ---- serialisation --------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"n": self.n, "open_e": self.open_e.astype(int).tolist(), "open_s": self.open_s.astype(int).tolist(),
                "start": list(self.start), "goal": list(self.goal),
                "key": None if self.key is None else list(self.key),
                "door": None if self.door is None else list(self.door),
                "ice": [list(c) for c in self.ice]}

    @classmethod
    def from_dict(cls, d: dict) -> "Maze":
        t = (lambda v: None if v is None else tuple(int(x) for x in v))
        return cls(n=int(d["n"]), open_e=np.array(d["open_e"], dtype=bool).reshape(d["n"], d["n"] - 1),
                   open_s=np.array(d["open_s"], dtype=bool).reshape(d["n"] - 1, d["n"]),
                   start=t(d["start"]), goal=t(d["goal"]), key=t(d.get("key")), door=t(d.get("door")),
                   ice=tuple(t(c) for c in d.get("ice", ())))


# ---- dynamics ---------------------------------------------------------------------------------
def transition(maze: Maze, cell: tuple[int, int], has_key: int, action: int):
    """One step: ``(cell', has_key', outcome)`` with outcome ``"goal"``, ``"ice"`` or None.
    Into a wall, or into the door without the key: the agent stays."""
    if not maze.is_open(cell, action):
        nxt = cell
    else:
        dr, dc = ACTIONS[action]
        nxt = (cell[0] + dr, cell[1] + dc)
        if maze.door is not None and nxt == maze.door and not has_key:
            nxt = cell
    if maze.key is not None and nxt == maze.key:
        has_key = 1
    if nxt in maze.ice:
        return nxt, has_key, "ice"
    if nxt == maze.goal:
        return nxt, has_key, "goal"
    return nxt, has_key, None


def solve(maze: Maze) -> np.ndarray:
    """Exact distance to the goal of every state (row, col, has_key): an (n, n, 2) int array, -1
    where the goal cannot be reached (ice cells, and the goal itself is 0). Breadth-first search
    backwards from the goal over the state graph, so key possession and ice are part of it."""
    n = maze.n
    pred: dict[tuple, list] = {}
    for r in range(n):
        for c in range(n):
            if (r, c) == maze.goal or (r, c) in maze.ice:
                continue                                  # terminal states have no successors
            for k in (0, 1):
                for a in range(4):
                    nxt, k2, _ = transition(maze, (r, c), k, a)
                    pred.setdefault((nxt[0], nxt[1], k2), []).append((r, c, k))
    dist = -np.ones((n, n, 2), dtype=np.int64)
    q = deque()
    for k in (0, 1):
        dist[maze.goal[0], maze.goal[1], k] = 0
        q.append((maze.goal[0], maze.goal[1], k))
    while q:
        s = q.popleft()
        for p in pred.get(s, ()):
            if dist[p] < 0:
                dist[p] = dist[s] + 1
                q.append(p)
    return dist


def optimal_actions(maze: Maze, dist: np.ndarray, cell: tuple[int, int], has_key: int) -> list[int]:
    """Every action that lowers the exact distance to the goal by one (empty where unsolvable)."""
    d = dist[cell[0], cell[1], has_key]
    if d <= 0:
        return []
    out = []
    for a in range(4):
        nxt, k2, outcome = transition(maze, cell, has_key, a)
        if outcome == "ice":
            continue
        if dist[nxt[0], nxt[1], k2] == d - 1:
            out.append(a)
    return out


def optimal_length(maze: Maze) -> int:
    """Steps an optimal agent needs from the start (-1 if the goal is unreachable)."""
    return int(solve(maze)[maze.start[0], maze.start[1], 0])


# ---- generation -------------------------------------------------------------------------------
def _carve(n: int, rng: np.random.Generator, root: tuple[int, int]):
    """A perfect maze (spanning tree) by an iterative depth-first walk from ``root``."""
    open_e = np.zeros((n, n - 1), dtype=bool)
    open_s = np.zeros((n - 1, n), dtype=bool)
    seen = np.zeros((n, n), dtype=bool)
    stack = [root]
    seen[root] = True
    while stack:
        r, c = stack[-1]
        nbrs = [(a, r + dr, c + dc) for a, (dr, dc) in enumerate(ACTIONS)
                if 0 <= r + dr < n and 0 <= c + dc < n and not seen[r + dr, c + dc]]
        if not nbrs:
            stack.pop()
            continue
        a, r2, c2 = nbrs[int(rng.integers(len(nbrs)))]
        _open(open_e, open_s, (r, c), a)
        seen[r2, c2] = True
        stack.append((r2, c2))
    return open_e, open_s


def _open(open_e, open_s, cell, action):
    r, c = cell
    if action == 0:
        open_s[r - 1, c] = True
    elif action == 1:
        open_e[r, c] = True
    elif action == 2:
        open_s[r, c] = True
    else:
        open_e[r, c - 1] = True


def _shortest_path(maze: Maze, blocked=frozenset()) -> list[tuple[int, int]] | None:
    """Cells of one shortest start-goal path avoiding ``blocked`` (ignoring key and door)."""
    prev = {maze.start: None}
    q = deque([maze.start])
    while q:
        cell = q.popleft()
        if cell == maze.goal:
            path = []
            while cell is not None:
                path.append(cell)
                cell = prev[cell]
            return path[::-1]
        for a in range(4):
            if maze.is_open(cell, a):
                nxt = (cell[0] + ACTIONS[a][0], cell[1] + ACTIONS[a][1])
                if nxt not in prev and nxt not in blocked:
                    prev[nxt] = cell
                    q.append(nxt)
    return None


def generate(n: int, variant: str, rng: np.random.Generator, loop_fraction: float = 0.1,
             random_ends: bool = False, n_ice: int = 2) -> Maze:
    """One random maze of ``variant``. ``loop_fraction``: share of the walls left after carving
    that are opened too (more than one path); ``random_ends``: random start and goal instead of
    the corners. Key-and-door mazes stay perfect (one path); ice mazes get at least two paths."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if not 0.0 <= loop_fraction <= 1.0:
        raise ValueError(f"loop_fraction must be in [0, 1], got {loop_fraction}")
    for _ in range(1000):
        if random_ends:
            cells = rng.choice(n * n, size=2, replace=False)
            start, goal = (int(cells[0] // n), int(cells[0] % n)), (int(cells[1] // n), int(cells[1] % n))
        else:
            start, goal = (0, 0), (n - 1, n - 1)
        open_e, open_s = _carve(n, rng, start)
        frac = 0.0 if variant == "key_door" else max(loop_fraction, 0.15 if variant == "ice" else 0.0)
        closed = [("e", i) for i in np.flatnonzero(~open_e.ravel())] + \
                 [("s", i) for i in np.flatnonzero(~open_s.ravel())]
        n_open = int(round(frac * len(closed)))
        for j in rng.permutation(len(closed))[:n_open]:
            kind, i = closed[j]
            (open_e if kind == "e" else open_s).ravel()[i] = True
        maze = Maze(n, open_e, open_s, start, goal)
        if variant == "key_door":
            made = _place_key_door(maze, rng)
        elif variant == "ice":
            made = _place_ice(maze, rng, n_ice)
        else:
            made = maze
        if made is not None:
            return made
    raise RuntimeError(f"could not build a {variant} maze of size {n} in 1000 tries")


def _place_key_door(maze: Maze, rng) -> Maze | None:
    path = _shortest_path(maze)
    inner = path[1:-1]
    if not inner:
        return None
    door = inner[int(rng.integers(len(inner)))]
    # the key: off the start-goal path, reachable from the start without crossing the door
    reach = {maze.start}
    q = deque([maze.start])
    while q:
        cell = q.popleft()
        for a in range(4):
            if maze.is_open(cell, a):
                nxt = (cell[0] + ACTIONS[a][0], cell[1] + ACTIONS[a][1])
                if nxt != door and nxt not in reach:
                    reach.add(nxt)
                    q.append(nxt)
    on_path = set(path)
    keys = sorted(c for c in reach if c not in on_path)
    if not keys:
        return None
    key = keys[int(rng.integers(len(keys)))]
    return Maze(maze.n, maze.open_e, maze.open_s, maze.start, maze.goal, key=key, door=door)


def _place_ice(maze: Maze, rng, n_ice: int) -> Maze | None:
    path = _shortest_path(maze)
    inner = path[1:-1]
    ice: set = set()
    for j in rng.permutation(len(inner)):
        cell = inner[j]
        if _shortest_path(maze, frozenset(ice | {cell})) is not None:
            ice.add(cell)
        if len(ice) >= n_ice:
            break
    if not ice:
        return None
    return Maze(maze.n, maze.open_e, maze.open_s, maze.start, maze.goal, ice=tuple(sorted(ice)))


def make_splits(n: int, variant: str, sizes: dict[str, int], rng: np.random.Generator,
                loop_fraction: float = 0.1, random_ends: bool = False, max_tries: int = 200) -> dict[str, list[Maze]]:
    """Train / eval / test mazes (``sizes``: split -> count) with pairwise distinct structures: a
    maze whose structure hash was already drawn (in any split) is redrawn. Raises when the maze
    family is too small to hold that many distinct structures."""
    seen: set[str] = set()
    out: dict[str, list[Maze]] = {}
    for split, count in sizes.items():
        out[split] = []
        misses = 0
        while len(out[split]) < count:
            m = generate(n, variant, rng, loop_fraction, random_ends)
            h = m.structure_hash()
            if h in seen:
                misses += 1
                if misses > max_tries * max(count, 1):
                    raise RuntimeError(f"only {len(seen)} distinct {n}x{n} {variant} structures found; "
                                       f"{sum(sizes.values())} asked for (split {split!r})")
                continue
            seen.add(h)
            out[split].append(m)
    return out


# ---- observations -----------------------------------------------------------------------------
def static_planes(maze: Maze) -> np.ndarray:
    """The channels that do not change within an episode: walls up/right/down/left, goal, start,
    door, ice (channels 0-3, 5, 6, 8, 9 of :func:`encode`)."""
    n = maze.n
    x = np.zeros((N_CHANNELS, n, n), dtype=np.float32)
    for r in range(n):
        for c in range(n):
            for a in range(4):
                x[a, r, c] = 0.0 if maze.is_open((r, c), a) else 1.0
    x[5][maze.goal] = 1.0
    x[6][maze.start] = 1.0
    if maze.door is not None:
        x[8][maze.door] = 1.0
    for cell in maze.ice:
        x[9][cell] = 1.0
    return x


def encode(maze: Maze, cell: tuple[int, int], has_key: int, view_radius: int | None = None,
           static: np.ndarray | None = None) -> np.ndarray:
    """The observation, (12, n, n) float32 in {0, 1}: 0-3 walls (up, right, down, left), 4 agent,
    5 goal, 6 start, 7 key (until taken), 8 door, 9 ice, 10 has-key (a constant plane), 11 visible.
    With ``view_radius`` r, cells farther than r (Chebyshev) from the agent are hidden: every
    channel but goal, start, agent and has-key reads 0 there, and channel 11 marks what is seen."""
    x = (static_planes(maze) if static is None else static).copy()
    x[4][cell] = 1.0
    if maze.key is not None and not has_key:
        x[7][maze.key] = 1.0
    x[10] = float(has_key)
    if view_radius is None:
        x[11] = 1.0
    else:
        n = maze.n
        vis = np.zeros((n, n), dtype=np.float32)
        vis[max(0, cell[0] - view_radius):cell[0] + view_radius + 1,
            max(0, cell[1] - view_radius):cell[1] + view_radius + 1] = 1.0
        for ch in (0, 1, 2, 3, 7, 8, 9):
            x[ch] *= vis
        x[11] = vis
    return x


# ---- rendering --------------------------------------------------------------------------------
COLOURS = {"floor": (245, 245, 240), "wall": (20, 20, 20), "agent": (40, 170, 60), "goal": (40, 90, 220),
           "start": (220, 60, 50), "key": (240, 200, 20), "door": (130, 80, 30), "ice": (170, 225, 250),
           "hidden": (120, 120, 120)}


def render_rgb(maze: Maze, cell: tuple[int, int], has_key: int, view_radius: int | None = None,
               px: int = 16) -> np.ndarray:
    """An (n*px+1, n*px+1, 3) uint8 picture: walls black, start red, goal blue, agent green,
    key yellow, door brown, ice light blue, hidden cells grey (their walls not drawn)."""
    n = maze.n
    size = n * px + 1
    img = np.empty((size, size, 3), dtype=np.uint8)
    img[:] = COLOURS["floor"]

    def fill(c, colour, inset=2):
        r0, c0 = c[0] * px + inset, c[1] * px + inset
        img[r0:r0 + px - 2 * inset + 1, c0:c0 + px - 2 * inset + 1] = COLOURS[colour]

    for ic in maze.ice:
        fill(ic, "ice", 1)
    fill(maze.start, "start", 3)
    fill(maze.goal, "goal", 3)
    if maze.door is not None:
        fill(maze.door, "door", 2)
    if maze.key is not None and not has_key:
        fill(maze.key, "key", 5)
    fill(cell, "agent", 4)
    hidden = np.zeros((n, n), dtype=bool)
    if view_radius is not None:
        for r in range(n):
            for c in range(n):
                if max(abs(r - cell[0]), abs(c - cell[1])) > view_radius and (r, c) not in (maze.goal, maze.start):
                    fill((r, c), "hidden", 0)
                    hidden[r, c] = True
    for r in range(n):
        for c in range(n):
            if hidden[r, c]:
                continue                                  # the agent does not see these walls
            y, x = r * px, c * px
            if not maze.is_open((r, c), 0):
                img[y, x:x + px + 1] = COLOURS["wall"]
            if not maze.is_open((r, c), 2):
                img[y + px, x:x + px + 1] = COLOURS["wall"]
            if not maze.is_open((r, c), 3):
                img[y:y + px + 1, x] = COLOURS["wall"]
            if not maze.is_open((r, c), 1):
                img[y:y + px + 1, x + px] = COLOURS["wall"]
    return img


# ---- the official file format -----------------------------------------------------------------
def parse_official(text: str) -> Maze:
    """A maze from the official ``.labyrinth`` text format (github.com/NathanGavenski/Labyrinth,
    README "Creating a labyrinth from a file"): rows of ``| c | c |`` cells with ``|`` vertical
    walls, ``-`` horizontal walls between them, ``S`` start, ``E`` end, ``K`` key, ``D`` door,
    ``I`` ice. Row 0 is the file's top row."""
    lines = text.splitlines()
    try:
        i0 = next(i for i, line in enumerate(lines) if line.strip() == "labyrinth:") + 1
        i1 = next(i for i in range(i0, len(lines)) if lines[i].strip() == "end")
    except StopIteration:
        raise ValueError("not a .labyrinth file: no 'labyrinth:' ... 'end' block") from None
    grid = lines[i0:i1]
    if len(grid) < 3 or len(grid) % 2 == 0:
        raise ValueError(f"a .labyrinth grid has 2n+1 lines, got {len(grid)}")
    n = (len(grid) - 1) // 2
    grid = [line.ljust(4 * n + 1) for line in grid]
    open_e = np.zeros((n, n - 1), dtype=bool)
    open_s = np.zeros((n - 1, n), dtype=bool)
    marks: dict[str, list] = {}
    for r in range(n):
        row = grid[1 + 2 * r]
        for c in range(n):
            ch = row[2 + 4 * c]
            if ch.strip():
                marks.setdefault(ch, []).append((r, c))
            if c < n - 1:
                open_e[r, c] = row[4 + 4 * c] != "|"
        if r < n - 1:
            below = grid[2 + 2 * r]
            for c in range(n):
                open_s[r, c] = below[2 + 4 * c] != "-"
    one = (lambda k: marks[k][0] if k in marks else None)
    if "S" not in marks or "E" not in marks:
        raise ValueError("a .labyrinth grid needs an S (start) and an E (end)")
    return Maze(n, open_e, open_s, one("S"), one("E"), key=one("K"), door=one("D"),
                ice=tuple(sorted(marks.get("I", []))))


def load_mazes(path) -> dict:
    """{seed: {variant: {split: [Maze]}}} from data/labyrinth/mazes.json (one entry per verdict seed)."""
    import json

    raw = json.loads(path.read_text())
    return {int(seed): {v: {k: [Maze.from_dict(d) for d in ms] for k, ms in s.items()} for v, s in per.items()}
            for seed, per in raw.items()}
