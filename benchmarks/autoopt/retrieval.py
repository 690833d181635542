"""autoopt: the retrieval baseline's nearest-neighbour search (stages.autoopt.m1.metrics.nearest,
numpy) against scikit-learn's brute-force NearestNeighbors, on vectors of the default profile's
size (2,400 training images of 20 x 100 pixels, 500 queries). Prints both times, their ratio and
whether the two agree on every neighbour.

    python benchmarks/autoopt/retrieval.py [--train 2400] [--queries 500] [--dims 2000]

``--smoke`` runs it at tiny sizes in seconds (what CI runs).
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", type=int, default=2400)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--dims", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.train, a.queries, a.dims, a.repeats = 200, 20, 50, 1
    from sklearn.neighbors import NearestNeighbors
    from threadpoolctl import threadpool_limits

    from stages.autoopt.m1.metrics import nearest

    rng = np.random.default_rng(0)
    train = rng.random((a.train, a.dims), dtype=np.float32)
    query = rng.random((a.queries, a.dims), dtype=np.float32)
    with threadpool_limits(1):
        ours, theirs = [], []
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            mine = nearest(train, query)
            ours.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            nn = NearestNeighbors(n_neighbors=1, algorithm="brute").fit(train)
            ref = nn.kneighbors(query, return_distance=False)[:, 0]
            theirs.append(time.perf_counter() - t0)
    agree = float(np.mean(mine == ref))
    print(f"numpy nearest: {min(ours):.3f}s   sklearn brute NearestNeighbors: {min(theirs):.3f}s   "
          f"ratio ours/sklearn = {min(ours) / min(theirs):.2f}   same neighbour for {agree:.1%} of queries")


if __name__ == "__main__":
    main()
