"""nav_knowledge replan: incremental replanning (LPA*) vs recomputing the distance field, per
verdict seed.

For each verdict seed (``ctx.seeds``: the seed draws the benchmark's worlds and walks) and grid
side in ``sizes``: a world whose wall segments cover ``wall_frac`` of the cells, an
agent knowing ``p_known`` of them walks (nearly greedily, beta = 10) from a start to a goal at
least ``size`` moves apart (new walks until ``max_events`` events or 20 walks), replanning whenever it sees a wall it did not know. The first
``max_events`` replanning events are replayed four ways, each the best of ``repeats`` timings:
our incremental repair (``planner.repair``: the two-phase Ramalingam-Reps update for new walls),
LPA* alone (``planner.lpa_update``), our Dijkstra from scratch (pure Python, binary heap)
and ``scipy.sparse.csgraph.dijkstra`` (C) from scratch, timed on the call alone and with building
its CSR graph. Every repaired field is compared with both from-scratch fields (exact equality,
inf included); a field that differs stops the stage (a planner bug: the timings would compare
different answers). Timings vary run to run and with the machine's load, so they live in
reports/nav_knowledge/replan.json (``per_seed`` beside the mean over the seeds; the determinism
test leaves it out), and evaluate copies them into the metrics. replan.csv holds the mean over the
seeds of each size's ms per event.
"""
from __future__ import annotations

import gc
import time

from stages.common.runtime.stage import stage

from .params import NavKnowledgeParams
from .paths import REPLAN_CSV, REPLAN_METRICS

WALKS = 20


def fastest(fn, repeats: int) -> float:
    """Fastest of ``repeats`` calls of ``fn`` (CPU seconds of this process, which other jobs on a
    shared machine inflate less than wall time), the garbage collector off while timing
    (as ``timeit`` does: the stored fields are many objects, and a collection in the middle of
    one method's loop would be charged to it)."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            t0 = time.process_time()
            fn()
            best = min(best, time.process_time() - t0)
        finally:
            gc.enable()
    return best


def events_for(size: int, rp, seed: int) -> tuple:
    """(world, replanning events (goal, field before, new wall cells, blocked after)) of up to
    ``WALKS`` benchmark walks (new start and goal each) on a ``size x size`` grid."""
    import numpy as np

    from .world import make_world, pick_start_goal, simulate

    rng = np.random.default_rng([seed, 4003, size])
    mean_len = (rp.wall_len[0] + rp.wall_len[1]) / 2
    n_walls = max(1, round(rp.wall_frac * size * size / mean_len))
    world = make_world(rng, size, size, n_walls, tuple(rp.wall_len), max_tries=50 * n_walls + 1000)
    known = rng.random(world.n_walls) < rp.p_known
    events = []
    for _ in range(WALKS):
        s, g = pick_start_goal(rng, world, size)
        out = simulate(world, known, s, g, 10.0, rng, 8 * size * size)
        events += [(g, *e) for e in out["replans"]]
        if len(events) >= rp.max_events:
            break
    return world, events[:rp.max_events]


def bench_size(size: int, rp, seed: int, log=None) -> dict:
    """Timings and the exactness check at one grid size (``log``: a progress line between them)."""
    import numpy as np

    from .planner import dijkstra, grid_csr, lpa_update, repair, scipy_field

    world, events = events_for(size, rp, seed)
    if not events:
        return {"size": size, "events": 0}
    nbrs = world.nbrs
    max_diff = 0.0
    expanded = 0
    for goal, before, changed, blocked in events:
        d, d_lpa = list(before), list(before)
        expanded += repair(nbrs, blocked, goal, d, changed)
        lpa_update(nbrs, blocked, goal, d_lpa, changed)
        ref = np.array(dijkstra(nbrs, blocked, goal))
        same = all(np.array_equal(np.array(x), ref) for x in (d, d_lpa, scipy_field(size, size, blocked, goal)))
        max_diff = max(max_diff, 0.0 if same else float("inf"))
    if log:
        log(f"  seed {seed}, {size:4d}^2: {len(events)} events checked against both from-scratch fields; timing")

    def incremental(fn) -> float:
        best = float("inf")
        for _ in range(rp.repeats):
            copies = [list(e[1]) for e in events]      # fresh copies, made before the clock starts
            best = min(best, fastest(lambda: [fn(nbrs, e[3], e[0], d, e[2]) for d, e in zip(copies, events)], 1))
        return best

    t_inc = incremental(repair)
    t_lpa = incremental(lpa_update)
    t_scratch = fastest(lambda: [dijkstra(nbrs, e[3], e[0]) for e in events], rp.repeats)
    graphs = [grid_csr(size, size, e[3]) for e in events]
    from scipy.sparse.csgraph import dijkstra as sp_dijkstra

    t_scipy = fastest(lambda: [sp_dijkstra(gr, directed=False, indices=e[0]) for gr, e in zip(graphs, events)], rp.repeats)
    t_scipy_build = fastest(lambda: [sp_dijkstra(grid_csr(size, size, e[3]), directed=False, indices=e[0])
                                     for e in events], rp.repeats)
    n = len(events)
    return {"size": size, "events": n, "walls": world.n_walls, "identical": bool(max_diff == 0.0),
            "cells_expanded_mean": expanded / n,
            "incremental_ms": 1e3 * t_inc / n, "lpa_ms": 1e3 * t_lpa / n, "dijkstra_ms": 1e3 * t_scratch / n,
            "scipy_ms": 1e3 * t_scipy / n, "scipy_with_graph_ms": 1e3 * t_scipy_build / n,
            "speedup_vs_dijkstra": t_scratch / t_inc, "lpa_speedup_vs_dijkstra": t_scratch / t_lpa,
            "speedup_vs_scipy": t_scipy / t_inc,
            "speedup_vs_scipy_with_graph": t_scipy_build / t_inc}


def run(rp, seed: int, log=None) -> dict:
    """Every grid size of one seed; ``log`` (e.g. print) gets progress lines and each size's figures."""
    rows = []
    for size in rp.sizes:
        r = bench_size(size, rp, seed, log)
        rows.append(r)
        if log and r["events"]:
            log(f"  seed {seed}, {r['size']:4d}^2: {r['events']} events, identical={r['identical']}, incremental "
                f"{r['incremental_ms']:.3f} ms (LPA* alone {r['lpa_ms']:.3f}), Dijkstra {r['dijkstra_ms']:.3f} ms "
                f"({r['speedup_vs_dijkstra']:.1f}x), scipy {r['scipy_ms']:.3f} ms "
                f"({r['speedup_vs_scipy']:.1f}x; {r['speedup_vs_scipy_with_graph']:.1f}x with its graph build)")
    by = {r["size"]: r for r in rows}
    timed = [r for r in rows if r["events"]]
    largest = max(timed, key=lambda r: r["size"])
    from stages.common.fits import loglog_slope

    slopes = {k: loglog_slope([r["size"] for r in timed], [r[k] for r in timed])[0]
              for k in ("incremental_ms", "lpa_ms", "dijkstra_ms", "scipy_ms", "scipy_with_graph_ms")} \
        if len(timed) >= 2 else {}
    return {"sizes": rows, "slopes": slopes,
            "identical_all": all(r["identical"] for r in timed),
            "events_total": sum(r["events"] for r in rows),
            "speedup_64": by[64].get("speedup_vs_dijkstra", float("nan")),
            "lpa_speedup_64": by[64].get("lpa_speedup_vs_dijkstra", float("nan")),
            "speedup_vs_scipy_64": by[64].get("speedup_vs_scipy", float("nan")),
            "largest_size": largest["size"],
            "speedup_vs_scipy_largest": largest["speedup_vs_scipy"],
            "speedup_vs_dijkstra_largest": largest["speedup_vs_dijkstra"]}


CSV_KEYS = ("incremental_ms", "lpa_ms", "dijkstra_ms", "scipy_ms", "scipy_with_graph_ms")


def run_seed(rp, seed: int) -> dict:
    """One verdict seed's benchmark, printed per size; a repaired field that differs from the
    from-scratch ones raises (a planner bug)."""
    out = run(rp, seed, log=lambda line: print(line, flush=True))
    if not out["identical_all"]:
        bad = [r["size"] for r in out["sizes"] if r["events"] and not r["identical"]]
        raise RuntimeError(f"seed {seed}: a repaired distance field differs from the from-scratch one at "
                           f"grid sides {bad}: a planner bug")
    return out


def main() -> None:
    with stage("nav_knowledge", "replan", NavKnowledgeParams) as ctx:
        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import write_csv
        from stages.common.seeds import per_seed_metrics, run_seeds

        rp = ctx.params.replan
        out = run_seeds(ctx.seeds, lambda s: run_seed(rp, s), what="seed")
        rows = []
        for size in rp.sizes:
            timed = [r for o in out.values() for r in o["sizes"] if r["size"] == size and r["events"]]
            if timed:
                rows.append({"size": size, **{k: float(np.mean([r[k] for r in timed])) for k in CSV_KEYS}})
        write_csv(ctx.path(REPLAN_CSV), rows)
        write_json(ctx.path(REPLAN_METRICS), per_seed_metrics(out))


if __name__ == "__main__":
    main()
