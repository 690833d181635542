"""jsp_multipolicy prepare: every verdict seed's test shops and their CP-SAT references.

Per verdict seed (``ctx.seeds``): random Taillard-style shops (durations U{1..99}) drawn from
numpy ``[seed, 0, set]``: 10x10 and 15x15 job shops (a random machine order per job) and 10x10
flow shops; each solved by OR-Tools CP-SAT (one worker, a deterministic-time limit per set; all
seeds' shops in one pool of spawned processes), its schedule checked, and whether CP-SAT proved it
optimal recorded (else the makespan is the best-known one).

Outputs: data/jsp_multipolicy/test.npz (keys ``<seed>|<set>_<field>``: machines, durations, ref,
bound, optimal; the same bytes on every run, so the solver's wall times are not in it) and
reports/jsp_multipolicy/prepare.json (per seed: optimal fractions, solve wall times, reference
over bound; stages.common.seeds.per_seed_metrics).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import PREPARE_METRICS, TEST_SET


def main() -> None:
    with stage("jsp_multipolicy", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz
        from stages.common.seeds import per_seed_metrics

        from .refs import SHAPES, solve
        from .jsp import SETS

        p = ctx.params.prepare
        counts = {"g10": p.n_test_10, "g15": p.n_test_15, "flow": p.n_test_flow}
        limits = {"g10": p.cpsat_limit_10, "g15": p.cpsat_limit_15, "flow": p.cpsat_limit_flow}
        seeds = ctx.seeds
        tests, wall = solve(seeds, counts, limits, p.workers, progress=True)
        per_seed = {}
        for s in seeds:
            a = tests[s]
            per_seed[s] = {name: {"instances": int(len(a[f"{name}_ref"])),
                                  "cpsat_optimal_fraction": float(np.mean(a[f"{name}_optimal"])),
                                  "cpsat_solve_s": float(a[f"{name}_solver_s"].sum()),
                                  "ref_over_bound_mean": float(np.mean(a[f"{name}_ref"] / a[f"{name}_bound"]))}
                           for name in SETS}
        for name in SETS:
            nj, nm, kind = SHAPES[name]
            print(f"  {name} ({nj}x{nm} {kind}): {counts[name]} shops a seed, CP-SAT proved "
                  f"{np.mean([per_seed[s][name]['cpsat_optimal_fraction'] for s in seeds]):.0%} optimal", flush=True)
        print(f"  CP-SAT: {sum(counts.values()) * len(seeds)} shops ({len(seeds)} seeds) in {wall:.1f} s wall "
              f"({p.workers} workers)", flush=True)
        write_npz(ctx.path(TEST_SET), {f"{s}|{k}": v for s in seeds for k, v in tests[s].items()
                                       if not k.endswith("_solver_s")})     # wall times: in prepare.json
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(per_seed, wall_s=wall))


if __name__ == "__main__":
    main()
