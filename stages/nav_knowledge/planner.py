"""Shortest-path distance fields on 4-connected unit-cost gridworlds, from scratch and incrementally.

A grid of ``H x W`` cells is flattened to indices ``r * W + c``; ``nbrs[u]`` lists the in-grid
4-neighbours of ``u``; ``blocked[u]`` is truthy for a wall cell. A *distance field* to ``goal`` is
the list ``dist`` with ``dist[u]`` = number of moves of the shortest wall-free path from ``u`` to
``goal`` (``inf`` if none, and for wall cells).

* :func:`dijkstra` recomputes a field from scratch (pure Python, binary heap ``heapq``): the
  baseline the incremental planner is compared with.
* :func:`lpa_update` repairs a field after some cells changed (wall added or removed) with
  Lifelong Planning A* (Koenig, Likhachev & Furcy 2004) without a heuristic and run until its
  queue is empty, i.e. the whole field is made consistent again (the DynamicSWSF-FP special case
  of Ramalingam & Reps). The goal plays LPA*'s start; the graph is undirected, so the field is
  the cost-to-go that D* Lite maintains. Only cells whose distance changes (and their
  neighbours) are touched, which is where the speed-up over recomputing comes from.
* :func:`block_update` repairs a field after cells became walls only, with the two-phase
  update of Ramalingam & Reps (1996) that LPA* generalises: phase 1 collects, without a heap, the
  cells that lost every shortest-path parent (distances only grow when walls appear); phase 2
  re-runs Dijkstra (binary heap) over those cells alone, seeded from their unaffected neighbours.
  Each affected cell is queued about once, where LPA* raises it to inf and lowers it again (two
  expansions, each re-deriving all neighbours), so large affected regions cost less.
* :func:`repair` is what the agent and inference call: :func:`block_update` when every changed
  cell is now a wall, :func:`lpa_update` otherwise (walls removed: LPA* then only lowers
  distances, one expansion per improved cell).
* :func:`scipy_field` is the library answer (``scipy.sparse.csgraph.dijkstra``, C), used by tests
  and the replanning benchmark.
"""
from __future__ import annotations

from heapq import heapify, heappop, heappush

INF = float("inf")


def grid_neighbours(H: int, W: int) -> list[tuple[int, ...]]:
    """``nbrs[u]``: the in-grid 4-neighbours of cell ``u = r * W + c`` (up, down, left, right)."""
    if H < 1 or W < 1:
        raise ValueError(f"grid must be at least 1x1, got {H}x{W}")
    out = []
    for r in range(H):
        for c in range(W):
            nb = []
            if r > 0:
                nb.append((r - 1) * W + c)
            if r < H - 1:
                nb.append((r + 1) * W + c)
            if c > 0:
                nb.append(r * W + c - 1)
            if c < W - 1:
                nb.append(r * W + c + 1)
            out.append(tuple(nb))
    return out


def dijkstra(nbrs, blocked, goal: int) -> list[float]:
    """Distance field to ``goal`` from scratch (Dijkstra with a binary heap, unit costs)."""
    n = len(nbrs)
    dist = [INF] * n
    if blocked[goal]:
        return dist
    dist[goal] = 0.0
    heap = [(0.0, goal)]
    while heap:
        d, u = heappop(heap)
        if d > dist[u]:
            continue
        nd = d + 1.0
        for v in nbrs[u]:
            if nd < dist[v] and not blocked[v]:
                dist[v] = nd
                heappush(heap, (nd, v))
    return dist


def lpa_update(nbrs, blocked, goal: int, dist: list[float], changed) -> int:
    """Repair ``dist`` in place after the cells ``changed`` flipped in ``blocked``.

    ``dist`` must be the exact field for ``blocked`` as it was before the change; ``blocked``
    must already hold the new values. Returns the number of cells expanded (popped and made
    consistent), a measure of the work done. The goal must stay free.
    """
    rhs: dict[int, float] = {}
    heap: list[tuple[float, int]] = []
    rhs_pop = rhs.pop

    def update_vertex(u: int, dist=dist, blocked=blocked, nbrs=nbrs, rhs=rhs, heap=heap, push=heappush) -> None:
        if u == goal:
            r = 0.0
        elif blocked[u]:
            r = INF
        else:
            r = INF
            for v in nbrs[u]:
                dv = dist[v]
                if dv < r:
                    r = dv
            r += 1.0
        g = dist[u]
        if r != g:
            rhs[u] = r
            push(heap, (r if r < g else g, u))
        elif u in rhs:
            del rhs[u]

    if blocked[goal]:
        raise ValueError(f"lpa_update: the goal cell {goal} is blocked")
    for c in changed:
        update_vertex(c)
        for v in nbrs[c]:
            update_vertex(v)
    expanded = 0
    rhs_get = rhs.get
    while heap:
        k, u = heappop(heap)
        r = rhs_get(u)
        if r is None:
            continue
        g = dist[u]
        if k != (r if r < g else g):
            continue                      # stale entry: u was re-queued with another key
        expanded += 1
        if g > r:                         # over-consistent: the distance drops to rhs
            dist[u] = r
            rhs_pop(u)
            for v in nbrs[u]:
                update_vertex(v)
        else:                             # under-consistent: raise to inf and re-derive
            dist[u] = INF
            update_vertex(u)
            for v in nbrs[u]:
                update_vertex(v)
    return expanded


def block_update(nbrs, blocked, goal: int, dist: list[float], changed) -> int:
    """Repair ``dist`` in place after the cells ``changed`` became walls (``blocked`` already
    updated; ``dist`` exact for the walls before). Returns the number of affected cells."""
    affected: set[int] = set()
    stack = []
    for c in changed:
        if not blocked[c]:
            raise ValueError(f"block_update: cell {c} is not a wall; use lpa_update for removed walls")
        if c == goal:
            raise ValueError(f"block_update: the goal cell {goal} is blocked")
        if c not in affected and dist[c] < INF:
            affected.add(c)
            stack.append(c)
    while stack:                                   # phase 1: cells left without a parent
        a = stack.pop()
        child_d = dist[a] + 1.0
        for w in nbrs[a]:
            if dist[w] != child_d or w in affected:
                continue
            parent_d = dist[a]
            for p in nbrs[w]:
                if dist[p] == parent_d and p not in affected:
                    break                          # w keeps a shortest-path parent
            else:
                affected.add(w)
                stack.append(w)
    for a in affected:
        dist[a] = INF
    heap = []
    for a in affected:                             # phase 2: Dijkstra over the affected cells
        if blocked[a]:
            continue
        best = INF
        for v in nbrs[a]:
            if dist[v] < best:
                best = dist[v]
        if best < INF:
            dist[a] = best + 1.0
            heap.append((best + 1.0, a))
    heapify(heap)
    while heap:
        d, u = heappop(heap)
        if d > dist[u]:
            continue
        nd = d + 1.0
        for v in nbrs[u]:
            if nd < dist[v] and not blocked[v]:
                dist[v] = nd
                heappush(heap, (nd, v))
    return len(affected)


def repair(nbrs, blocked, goal: int, dist: list[float], changed) -> int:
    """Incremental repair of ``dist`` after ``changed`` flipped: :func:`block_update` when they all
    became walls, else :func:`lpa_update`."""
    if all(blocked[c] for c in changed):
        return block_update(nbrs, blocked, goal, dist, changed)
    return lpa_update(nbrs, blocked, goal, dist, changed)


def grid_csr(H: int, W: int, blocked):
    """The grid graph without its wall cells as a scipy CSR matrix (unit edge weights)."""
    import numpy as np
    from scipy.sparse import csr_matrix

    free = ~np.asarray(blocked, dtype=bool).reshape(H, W)
    idx = np.arange(H * W).reshape(H, W)
    rows, cols = [], []
    for a, b, fa, fb in ((idx[:, :-1], idx[:, 1:], free[:, :-1], free[:, 1:]),
                         (idx[:-1, :], idx[1:, :], free[:-1, :], free[1:, :])):
        ok = fa & fb
        rows += [a[ok], b[ok]]
        cols += [b[ok], a[ok]]
    r = np.concatenate(rows)
    c = np.concatenate(cols)
    return csr_matrix((np.ones(r.size), (r, c)), shape=(H * W, H * W))


def scipy_field(H: int, W: int, blocked, goal: int, graph=None):
    """Distance field by ``scipy.sparse.csgraph.dijkstra`` (C); wall cells get inf."""
    import numpy as np
    from scipy.sparse.csgraph import dijkstra as sp_dijkstra

    graph = grid_csr(H, W, blocked) if graph is None else graph
    d = sp_dijkstra(graph, directed=False, indices=goal)
    d[np.asarray(blocked, dtype=bool)] = np.inf
    return d
