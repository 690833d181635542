"""llm_co_foarl prepare: random TSP and 0/1 knapsack instances with their OR-Tools optima.

Instances are drawn from ``prepare.data_seed``, once: every verdict seed trains and is evaluated on
the same solved instances (the verdict seeds repeat the training, its draws and the decoding, not
the data; docs/VERDICTS.md, section 1: work that does not depend on the seed runs once). Every
optimum is proved by CP-SAT in spawned worker processes (solvers.py). Outputs:
data/llm_co_foarl/dataset.json ({problem: {train, test}}, each a list of solved instances) and
reports/llm_co_foarl/prepare.json (sizes, mean optima, time).
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

        p = ctx.params.prepare
        size = {"tsp": p.size.tsp, "kp": p.size.kp}
        print(f"  data seed {p.data_seed}: solving {p.n_train} train + {p.n_test} test instances per problem "
              f"({', '.join(f'{k}-{v}' for k, v in size.items())}) with CP-SAT", flush=True)
        t0 = time.time()
        out = core.solve_dataset(size, p.n_train, p.n_test, p.workers, p.data_seed)
        stats = {prob: {"size": size[prob], "n_train": p.n_train, "n_test": p.n_test,
                        "mean_test_optimum": float(np.mean([r["opt"] for r in out[prob]["test"]]))} for prob in out}
        write_json(ctx.path(DATASET), out)
        write_json(ctx.path(PREPARE_METRICS), {**stats, "data_seed": p.data_seed,
                                               "solve_wall_s": round(time.time() - t0, 2)})


if __name__ == "__main__":
    main()
