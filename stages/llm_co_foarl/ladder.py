"""The ladder's reference heuristics, on the same solved test instances as the models: a random
solution and the greedy heuristic (TSP: nearest neighbour; knapsack: best value/weight first)."""
from __future__ import annotations

import numpy as np

from .problems import distances, tour_length


def nearest_neighbour_tour(pts: np.ndarray, start: int = 0) -> list[int]:
    """Greedy tour: from ``start``, always to the nearest unvisited node (ties: the lower label)."""
    d = distances(pts)
    tour, left = [start], set(range(len(pts))) - {start}
    while left:
        nxt = min(left, key=lambda k: (d[tour[-1], k], k))
        tour.append(nxt)
        left.remove(nxt)
    return tour


def greedy_knapsack(items: np.ndarray, cap: int, order=None) -> list[int]:
    """Items in ``order`` (default: value/weight, best first), each taken if it still fits."""
    if order is None:
        order = sorted(range(len(items)), key=lambda i: (-items[i, 1] / items[i, 0], i))
    chosen, w = [], 0
    for i in order:
        if w + items[i, 0] <= cap:
            chosen.append(int(i))
            w += int(items[i, 0])
    return sorted(chosen)


def heuristic_gaps(problem: str, rows: list[dict], rng: np.random.Generator) -> dict:
    """Mean gaps (fractions) of a random solution and of the greedy heuristic on solved ``rows``:
    TSP a random tour and nearest neighbour from node 0; knapsack items in random order and by
    value/weight, each taken while it fits (both always feasible)."""
    rnd, greedy = [], []
    for r in rows:
        if problem == "tsp":
            pts = np.array(r["pts"])
            rnd.append(tour_length(pts, rng.permutation(len(pts))) / r["opt"] - 1)
            greedy.append(tour_length(pts, nearest_neighbour_tour(pts)) / r["opt"] - 1)
        else:
            items = np.array(r["items"])
            for out, order in ((rnd, rng.permutation(len(items))), (greedy, None)):
                v = items[greedy_knapsack(items, r["cap"], order), 1].sum()
                out.append((r["opt"] - v) / r["opt"])
    return {"random": float(np.mean(rnd)), "greedy_heuristic": float(np.mean(greedy))}
