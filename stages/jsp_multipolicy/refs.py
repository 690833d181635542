"""Every seed's test shops and their CP-SAT references (the prepare stage's work, also the
calibration script's): a module of its own so that the prepare stage depends on the shops and the
solver, not on the networks."""
from __future__ import annotations

import numpy as np

from .jsp import SETS, check_schedule, random_instances

SHAPES = {"g10": (10, 10, "jssp"), "g15": (15, 15, "jssp"), "flow": (10, 10, "flow")}


def test_shops(seed: int, counts: dict) -> dict:
    """{set: (machines, durations)} of one seed: ``counts[set]`` random shops of each set."""
    out = {}
    for i, name in enumerate(SETS):
        nj, nm, kind = SHAPES[name]
        out[name] = random_instances(counts[name], nj, nm, np.random.default_rng([seed, 0, i]), kind)
    return out


def solve(seeds, counts: dict, limits: dict, workers: int, progress: bool = False) -> tuple[dict, float]:
    """Every seed's test shops with their CP-SAT references, solved in one pool of ``workers``
    spawned processes (OR-Tools is imported there only, as stages.common.isolated.map_isolated
    does; the pool starts once, and reports progress): ({seed: {f"{set}_{field}": array}}, wall
    seconds). Fields: machines, durations, ref (CP-SAT's makespan, its schedule checked), bound,
    optimal, solver_s."""
    import multiprocessing
    import time

    from tqdm import tqdm

    from .jsp import cpsat_solve

    shops = {s: test_shops(s, counts) for s in seeds}
    items, spans = [], {}
    for s in seeds:
        for name in SETS:
            M, D = shops[s][name]
            spans[s, name] = slice(len(items), len(items) + len(M))
            items += [(M[k].tolist(), D[k].tolist(), limits[name]) for k in range(len(M))]
    t0 = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(min(workers, len(items))) as pool:
        solved = list(tqdm(pool.imap(cpsat_solve, items, chunksize=1), total=len(items), mininterval=2,
                           desc="CP-SAT", disable=not progress))
    wall = time.perf_counter() - t0
    out = {}
    for s in seeds:
        arrays = {}
        for name in SETS:
            M, D = shops[s][name]
            res = solved[spans[s, name]]
            for k, r in enumerate(res):
                if check_schedule(M[k], D[k], np.array(r["start"])) != r["makespan"]:
                    raise RuntimeError(f"CP-SAT's schedule for seed {s}, {name} shop {k} does not check")
            arrays |= {f"{name}_machines": M, f"{name}_durations": D,
                       f"{name}_ref": np.array([r["makespan"] for r in res]),
                       f"{name}_bound": np.array([r["bound"] for r in res]),
                       f"{name}_optimal": np.array([r["optimal"] for r in res]),
                       f"{name}_solver_s": np.array([r["wall_s"] for r in res])}
        out[s] = arrays
    return out, wall
