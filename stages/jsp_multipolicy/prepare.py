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

from stages.common.stage import stage

from .params import PARAMS
from .paths import PREPARE_METRICS, SETS, TEST_SET

SHAPES = {"g10": (10, 10, "jssp"), "g15": (15, 15, "jssp"), "flow": (10, 10, "flow")}


def main() -> None:
    with stage("jsp_multipolicy", "prepare", PARAMS) as ctx:
        import time

        import numpy as np

        from stages.common.io import write_json, write_npz
        from stages.common.isolated import map_isolated

        from .jsp import check_schedule, cpsat_solve, random_instances

        p = ctx.params.prepare
        counts = {"g10": p.n_test_10, "g15": p.n_test_15, "flow": p.n_test_flow}
        limits = {"g10": p.cpsat_limit_10, "g15": p.cpsat_limit_15, "flow": p.cpsat_limit_flow}
        arrays, info = {}, {}
        for i, name in enumerate(SETS):
            nj, nm, kind = SHAPES[name]
            M, D = random_instances(counts[name], nj, nm, np.random.default_rng([ctx.seed, 0, i]), kind)
            t0 = time.perf_counter()
            res = map_isolated(cpsat_solve, [(M[k].tolist(), D[k].tolist(), limits[name])
                                             for k in range(len(M))], p.workers)
            for k, r in enumerate(res):
                if check_schedule(M[k], D[k], np.array(r["start"])) != r["makespan"]:
                    raise RuntimeError(f"CP-SAT's schedule for {name} instance {k} does not check")
            arrays |= {f"{name}_machines": M, f"{name}_durations": D,
                       f"{name}_ref": np.array([r["makespan"] for r in res]),
                       f"{name}_bound": np.array([r["bound"] for r in res]),
                       f"{name}_optimal": np.array([r["optimal"] for r in res])}
            info[name] = {"instances": len(M), "shape": f"{nj}x{nm} {kind}",
                          "cpsat_optimal_fraction": float(np.mean(arrays[f"{name}_optimal"])),
                          "cpsat_solver_s_total": float(sum(r["wall_s"] for r in res)),
                          "wall_s": time.perf_counter() - t0,
                          "ref_over_bound_mean": float(np.mean(arrays[f"{name}_ref"] / arrays[f"{name}_bound"]))}
            print(f"  {name}: {len(M)} shops, CP-SAT proved {info[name]['cpsat_optimal_fraction']:.0%} optimal "
                  f"in {info[name]['wall_s']:.1f} s", flush=True)
        write_npz(ctx.path(TEST_SET), arrays)
        write_json(ctx.path(PREPARE_METRICS), info)


if __name__ == "__main__":
    main()
