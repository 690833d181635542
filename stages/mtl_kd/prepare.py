"""mtl_kd prepare: the test sets and their reference solutions, for every verdict seed.

Each verdict seed draws its own test sets (one independent repetition of the whole experiment):
for every variant (seen and unseen) a set at n, and for the seen variants one at n_large, each
instance solved by PyVRP's HGS (the reference; a fixed iteration limit, seeded with the verdict
seed). Outputs: data/mtl_kd/testsets/seed_<s>/<variant>_<n>.npz (the instance arrays,
``ref_cost``: the HGS routes costed in floats by vrp.route_cost, ``ref_int``: PyVRP's integer
cost) and reports/mtl_kd/prepare.json (per seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import PREPARE_METRICS, TESTSETS


def test_sets(p, seed: int):
    """{(variant, n): instances} of one verdict seed, each from its own seeded stream: every
    variant at n, the seen variants at n_large."""
    import numpy as np

    from . import vrp

    out = {}
    for k, v in enumerate(p.seen + p.unseen):
        for size, count in ((p.n, p.test_count), (p.n_large, p.large_count)):
            if size == p.n_large and v not in p.seen:
                continue
            out[(v, size)] = vrp.generate(v, size, count, np.random.default_rng([seed, 1, k, size]))
    return out


def reference_sets(p, seed: int, progress=None):
    """The test sets of ``seed`` with their HGS references: ({(variant, n): arrays with
    ``ref_cost`` and ``ref_int``}, {name: summary})."""
    import time

    import numpy as np

    from . import baseline, vrp

    sets, summary = {}, {}
    for (v, size), inst in test_sets(p, seed).items():
        iters = p.pyvrp_iterations if size == p.n else p.pyvrp_iterations_large
        t0 = time.process_time()
        ref, ref_int, infeasible = [], [], 0
        for i in range(len(inst["demand"])):
            routes, cost, feasible = baseline.solve(inst, i, iters, seed=seed)
            infeasible += (not feasible) or bool(vrp.check_solution(inst, i, routes, tol=1e-3))
            ref.append(vrp.route_cost(inst, i, routes))
            ref_int.append(cost)
            if progress is not None:
                progress.update()
        sets[(v, size)] = {**inst, "ref_cost": np.array(ref), "ref_int": np.array(ref_int)}
        summary[f"{v}_{size}"] = {"instances": len(ref), "mean_ref_cost": float(np.mean(ref)),
                                  "pyvrp_iterations": iters, "infeasible": int(infeasible),
                                  "pyvrp_cpu_s": time.process_time() - t0}
    return sets, summary


def main() -> None:
    with stage("mtl_kd", "prepare", PARAMS) as ctx:
        import importlib.metadata

        import numpy as np
        from tqdm import tqdm

        from stages.common.io import atomic_dir, write_json
        from stages.common.seeds import per_seed_metrics, run_seeds

        p = ctx.params.prepare
        per_seed = len(p.seen + p.unseen) * p.test_count + len(p.seen) * p.large_count
        bar = tqdm(total=per_seed * len(ctx.seeds), desc="PyVRP (HGS) references", mininterval=2)
        with atomic_dir(ctx.path(TESTSETS)) as tmp:
            def one(seed):
                sets, summary = reference_sets(p, seed, bar)
                folder = tmp / f"seed_{seed}"
                folder.mkdir()
                for (v, size), arrays in sets.items():
                    np.savez(folder / f"{v}_{size}.npz", **arrays)
                return {"sets": summary, "infeasible_references": sum(s["infeasible"] for s in summary.values()),
                        "pyvrp_cpu_s": sum(s["pyvrp_cpu_s"] for s in summary.values())}

            results = run_seeds(ctx.seeds, one, what="seed's references")
        bar.close()
        write_json(ctx.path(PREPARE_METRICS),
                   per_seed_metrics(results, pyvrp_version=importlib.metadata.version("pyvrp")))


if __name__ == "__main__":
    main()
