"""nav_knowledge: incremental replanning (our LPA*) vs recomputing the distance field, in one run.

    python benchmarks/nav_knowledge/replan.py [--sizes 32 64 128] [--events 30] [--repeats 3] [--seed 1000]
    --smoke runs it at tiny sizes in seconds (what CI runs).

Replays the replanning events of the study's benchmark walks (stages/nav_knowledge/replan.py: an
agent sees walls it did not know and repairs its distance-to-goal field) and prints, per grid
size, the CPU time per event of our incremental repair (pure Python; and of LPA* alone), our Dijkstra from scratch
(pure Python, heapq), scipy.sparse.csgraph.dijkstra (C; graph prebuilt, and with its build) and
networkx.single_source_dijkstra_path_length (graph prebuilt), the ratios from-scratch /
incremental, and whether every repaired field equals the from-scratch ones. Calibration seeds only
(>= 1000): a verdict seed's benchmark walks are the replan stage's.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[32, 64, 128])
    ap.add_argument("--events", type=int, default=30, help="replanning events per size at most")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1000, help="a calibration seed (>= 1000)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.seed < 1000:
        raise SystemExit("this benchmark uses calibration seeds >= 1000 only (the verdict seeds are < 1000)")
    if a.smoke:                                   # 64 is always run (ReplanParams requires it)
        a.sizes, a.events, a.repeats = [64], 2, 1
        print("smoke: size 64 only, 2 events, one repeat (figures meaningless)")
    import networkx as nx

    from stages.common.device import limit_threads
    from stages.nav_knowledge.params import ReplanParams
    from stages.nav_knowledge.planner import grid_csr
    from stages.nav_knowledge.replan import bench_size, events_for, fastest

    limit_threads()
    sizes = sorted(set(a.sizes) | {64})
    rp = ReplanParams(sizes=sizes, wall_frac=0.12, wall_len=[3, 10], p_known=0.5, max_events=a.events,
                      repeats=a.repeats)
    print(f"CPU ms per replanning event (best of {a.repeats}); ratio = from-scratch / incremental")
    for size in sizes:
        r = bench_size(size, rp, a.seed)
        if not r["events"]:
            print(f"  {size}^2: no replanning events")
            continue
        _, events = events_for(size, rp, a.seed)
        graphs = [nx.from_scipy_sparse_array(grid_csr(size, size, e[3])) for e in events]
        t_nx = fastest(lambda: [nx.single_source_dijkstra_path_length(g, e[0]) for g, e in zip(graphs, events)],
                     a.repeats) / len(events)
        print(f"  {size:4d}^2 ({r['events']} events, fields identical: {r['identical']}): incremental "
              f"{r['incremental_ms']:.3f} (LPA* alone {r['lpa_ms']:.3f}, {r['lpa_speedup_vs_dijkstra']:.1f}x) | Dijkstra (Python) {r['dijkstra_ms']:.3f} -> "
              f"{r['speedup_vs_dijkstra']:.1f}x | scipy {r['scipy_ms']:.3f} -> {r['speedup_vs_scipy']:.1f}x "
              f"(with graph build {r['speedup_vs_scipy_with_graph']:.1f}x) | networkx {1e3 * t_nx:.3f} -> "
              f"{1e3 * t_nx / r['incremental_ms']:.1f}x")


if __name__ == "__main__":
    main()
