"""labyrinth: our BFS expert (stages/labyrinth/maze.solve) against scipy's shortest paths on the
same state graph (position x key possession, ice terminal), in one run: it checks the distances
agree and prints the time ratio. Run: nice -n 19 python -m benchmarks.labyrinth.bfs [n] [mazes]
``--smoke`` runs it at tiny sizes in seconds (what CI runs): 2 mazes 5x5 of each variant."""
from __future__ import annotations

import argparse
import time

import numpy as np

from stages.labyrinth.maze import generate, solve, transition


def scipy_solve(maze):
    """Distances to the goal by scipy.sparse.csgraph.shortest_path (unweighted) on the reversed graph."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    n = maze.n
    idx = lambda r, c, k: (r * n + c) * 2 + k   # noqa: E731
    rows, cols = [], []
    for r in range(n):
        for c in range(n):
            if (r, c) == maze.goal or (r, c) in maze.ice:
                continue
            for k in (0, 1):
                for a in range(4):
                    (r2, c2), k2, _ = transition(maze, (r, c), k, a)
                    if (r2, c2, k2) != (r, c, k):
                        rows.append(idx(r2, c2, k2))
                        cols.append(idx(r, c, k))
    g = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(2 * n * n, 2 * n * n))
    d = shortest_path(g, unweighted=True, indices=[idx(*maze.goal, 0), idx(*maze.goal, 1)]).min(0)
    out = np.where(np.isinf(d), -1, d).astype(np.int64).reshape(n, n, 2)
    return out


def main(n: int = 8, count: int = 30) -> None:
    rng = np.random.default_rng(1000)   # a calibration seed (benchmarks never use a verdict seed)
    mazes = [generate(n, v, rng) for v in ("base", "key_door", "ice") for _ in range(count)]
    t0 = time.process_time()
    ours = [solve(m) for m in mazes]
    t1 = time.process_time()
    theirs = [scipy_solve(m) for m in mazes]
    t2 = time.process_time()
    same = all(np.array_equal(a, b) for a, b in zip(ours, theirs))
    print(f"{len(mazes)} mazes {n}x{n}: distances identical: {same}; ours {t1 - t0:.3f} s, "
          f"scipy (graph build + shortest_path) {t2 - t1:.3f} s CPU; ratio ours/scipy {(t1 - t0) / (t2 - t1):.2f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", nargs="?", type=int, default=8, help="maze side")
    ap.add_argument("mazes", nargs="?", type=int, default=30, help="mazes per variant")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        main(5, 2)
    else:
        main(a.n, a.mazes)
