"""mtl_kd prepare: the test sets and their reference solutions.

For every variant (seen and unseen) a test set at n and one at n_large, generated from the seed,
and each instance solved by PyVRP's HGS (the reference; a fixed iteration limit). Outputs:
data/mtl_kd/testsets/<variant>_<n>.npz (the instance arrays, ``ref_cost``: the HGS routes costed
in floats by vrp.route_cost, ``ref_int``: PyVRP's integer cost) and reports/mtl_kd/prepare.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import PREPARE_METRICS, TESTSETS


def test_sets(p, seed: int):
    """{(variant, n): instances}, each from its own seeded stream."""
    import numpy as np

    from . import vrp

    out = {}
    for k, v in enumerate(p.seen + p.unseen):
        for size, count in ((p.n, p.test_count), (p.n_large, p.large_count)):
            out[(v, size)] = vrp.generate(v, size, count, np.random.default_rng([seed, 1, k, size]))
    return out


def main() -> None:
    with stage("mtl_kd", "prepare", PARAMS) as ctx:
        import time

        import numpy as np
        from tqdm import tqdm

        from stages.common.io import atomic_dir, write_json

        from . import baseline, vrp

        p = ctx.params.prepare
        sets = test_sets(p, ctx.seed)
        summary = {}
        total = sum(len(inst["demand"]) for inst in sets.values())
        bar = tqdm(total=total, desc="PyVRP (HGS) references", mininterval=2)
        with atomic_dir(ctx.path(TESTSETS)) as tmp:
            for (v, size), inst in sets.items():
                iters = p.pyvrp_iterations if size == p.n else p.pyvrp_iterations_large
                t0 = time.process_time()
                ref, ref_int, infeasible = [], [], 0
                for i in range(len(inst["demand"])):
                    routes, cost, feasible = baseline.solve(inst, i, iters, seed=ctx.seed)
                    infeasible += (not feasible) or bool(vrp.check_solution(inst, i, routes, tol=1e-3))
                    ref.append(vrp.route_cost(inst, i, routes))
                    ref_int.append(cost)
                    bar.update()
                np.savez(tmp / f"{v}_{size}.npz", ref_cost=np.array(ref), ref_int=np.array(ref_int), **inst)
                summary[f"{v}_{size}"] = {"instances": len(ref), "mean_ref_cost": float(np.mean(ref)),
                                          "pyvrp_iterations": iters, "infeasible": int(infeasible),
                                          "pyvrp_cpu_s": time.process_time() - t0}
        bar.close()
        write_json(ctx.path(PREPARE_METRICS), {"pyvrp_version": __import__("importlib.metadata").metadata.version("pyvrp"),
                                               "sets": summary})


if __name__ == "__main__":
    main()
