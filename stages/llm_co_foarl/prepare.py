"""llm_co_foarl prepare: random TSP and 0/1 knapsack instances with their OR-Tools optima.

Instances are generated from the seed (no download); every optimum is proved by CP-SAT in spawned
worker processes (solvers.py). Outputs: data/llm_co_foarl/dataset.json ({problem: {train, test}},
each a list of solved instances) and reports/llm_co_foarl/prepare.json (sizes, mean optima, time).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DATASET, PREPARE_METRICS


def main() -> None:
    with stage("llm_co_foarl", "prepare", PARAMS) as ctx:
        import time

        import numpy as np

        from stages.common.io import write_json

        from . import core
        from .problems import PROBLEMS

        p = ctx.params.prepare
        out, stats = {}, {}
        t0 = time.time()
        for k, prob in enumerate(PROBLEMS):
            size = getattr(p.size, prob)
            rng = np.random.default_rng([ctx.seed, k])
            insts = core.make_instances(prob, size, p.n_train, rng) + core.make_instances(prob, size, p.n_test, rng)
            print(f"  {prob}-{size}: solving {p.n_train} train + {p.n_test} test instances with CP-SAT", flush=True)
            solved = core.with_optima(prob, insts, p.workers)   # one spawn of the OR-Tools workers per problem
            out[prob] = {"train": solved[:p.n_train], "test": solved[p.n_train:]}
            stats[prob] = {"size": size, "n_train": p.n_train, "n_test": p.n_test,
                           "mean_test_optimum": float(np.mean([r["opt"] for r in out[prob]["test"]]))}
        write_json(ctx.path(DATASET), out)
        write_json(ctx.path(PREPARE_METRICS), {**stats, "solve_wall_s": round(time.time() - t0, 2)})


if __name__ == "__main__":
    main()
