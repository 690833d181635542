"""jsp_multipolicy prepare: the test shops and their CP-SAT references.

Random Taillard-style shops (durations U{1..99}): 10x10 and 15x15 job shops (random machine
order per job) and 10x10 flow shops, generated from the seed; each solved by OR-Tools CP-SAT
(one worker, a deterministic-time limit per set, 2 processes through map_isolated), its
schedule checked, and whether CP-SAT proved it optimal recorded (else the makespan is the
best-known bound).

Outputs: data/jsp_multipolicy/test.npz (per set: machines, durations, ref, bound, optimal) and
reports/jsp_multipolicy/prepare.json (optimal fractions, solve times).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import PREPARE_METRICS, TEST_SET

SHAPES = {"g10": (10, 10, "jssp"), "g15": (15, 15, "jssp"), "flow": (10, 10, "flow")}


def main() -> None:
    with stage("jsp_multipolicy", "prepare", PARAMS) as ctx:
        import time

        import numpy as np

        from stages.common.io import write_json, write_npz
        from stages.common.isolated import map_isolated

        from .jsp import SETS, check_schedule, cpsat_solve, random_instances

        p = ctx.params.prepare
        counts = {"g10": p.n_test_10, "g15": p.n_test_15, "flow": p.n_test_flow}
        limits = {"g10": p.cpsat_limit_10, "g15": p.cpsat_limit_15, "flow": p.cpsat_limit_flow}
        arrays, info, items, spans = {}, {}, [], {}
        for i, name in enumerate(SETS):     # every set's shops in one pool: its workers start once
            nj, nm, kind = SHAPES[name]
            M, D = random_instances(counts[name], nj, nm, np.random.default_rng([ctx.seed, 0, i]), kind)
            arrays |= {f"{name}_machines": M, f"{name}_durations": D}
            spans[name] = slice(len(items), len(items) + len(M))
            items += [(M[k].tolist(), D[k].tolist(), limits[name]) for k in range(len(M))]
        t0 = time.perf_counter()
        solved = map_isolated(cpsat_solve, items, p.workers)
        wall = time.perf_counter() - t0
        for name in SETS:
            nj, nm, kind = SHAPES[name]
            M, D, res = arrays[f"{name}_machines"], arrays[f"{name}_durations"], solved[spans[name]]
            for k, r in enumerate(res):
                if check_schedule(M[k], D[k], np.array(r["start"])) != r["makespan"]:
                    raise RuntimeError(f"CP-SAT's schedule for {name} instance {k} does not check")
            arrays |= {f"{name}_ref": np.array([r["makespan"] for r in res]),
                       f"{name}_bound": np.array([r["bound"] for r in res]),
                       f"{name}_optimal": np.array([r["optimal"] for r in res])}
            info[name] = {"instances": len(M), "shape": f"{nj}x{nm} {kind}",
                          "cpsat_optimal_fraction": float(np.mean(arrays[f"{name}_optimal"])),
                          "cpsat_solver_s_total": float(sum(r["wall_s"] for r in res)),
                          "ref_over_bound_mean": float(np.mean(arrays[f"{name}_ref"] / arrays[f"{name}_bound"]))}
            print(f"  {name}: {len(M)} shops, CP-SAT proved {info[name]['cpsat_optimal_fraction']:.0%} optimal",
                  flush=True)
        info["wall_s"] = wall
        print(f"  CP-SAT: {len(items)} shops in {wall:.1f} s wall ({p.workers} workers)", flush=True)
        write_npz(ctx.path(TEST_SET), arrays)
        write_json(ctx.path(PREPARE_METRICS), info)


if __name__ == "__main__":
    main()
