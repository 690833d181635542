"""mnl_assortment prepare: every verdict seed's online and offline problems (``ctx.seeds``; each
seed its own problems and draws), with their optimal assortments (enumeration) checked against
HiGHS.

* Online (stages/mnl_assortment/env.py): per seed, ``runs`` problems of the canonical N-item MNL
  (a fixed catalogue with one-hot features, utilities theta*_i = B s_i in [-B, B], revenues,
  T choice uniforms), and for every radius the optimal expected revenue by enumerating all
  sum_{k<=K} C(N, k) assortments (385 for N = 10, K = 4) in log space.
* Offline: per seed and radius, ``offline_instances`` problems, each with ``offline_reps`` logged
  data sets of the largest n from a behaviour policy that rarely shows the optimal assortment.
* Check: on every online problem (round 0) and every offline problem, the enumerated optimum
  against the HiGHS solution of the Davis-Gallego-Topaloglu LP (the library answer); the stage
  stops if they differ by more than ``highs_tolerance`` (tests/mnl_assortment/test_mnl.py checks
  the same on its own problems).

Outputs: data/mnl_assortment/env.npz (the problems, keys ``s<seed>_on_*`` / ``s<seed>_off_*``),
reports/mnl_assortment/prepare.json (per seed: the check, the optimal revenues, how often S* was
logged).
"""
from __future__ import annotations

import time

from stages.common.io import write_npz
from stages.common.runtime.stage import fail, stage

from .params import MnlAssortmentParams
from .paths import ENV, PREPARE_METRICS


def highs_check(on: dict, off: dict, p, assortments) -> dict:
    """Enumeration vs the HiGHS LP on every online problem (round 0) and every offline problem."""
    import numpy as np

    from .env import online_problems
    from .mnl import highs_assortment, revenue

    worst, worst_support, n = 0.0, 0.0, 0
    problems = online_problems(on)
    for b in range(len(p.radii)):
        for i in range(p.offline_instances):
            problems.append((off["x"][b, i] @ off["theta"][b, i], off["r"][b, i], off["star_rev"][b, i]))
    for u, r, best in problems:
        val, items = highs_assortment(u, r, p.capacity)
        sup = float(revenue(u[items], r[items], np.arange(len(items))[None, :])[0])   # HiGHS's S, exactly
        worst = max(worst, abs(val - best))
        worst_support = max(worst_support, abs(sup - best))
        n += 1
    return {"problems": n, "max_abs_revenue_diff": worst, "max_abs_support_revenue_diff": worst_support}


def main() -> None:
    with stage("mnl_assortment", "prepare", MnlAssortmentParams) as ctx:
        import numpy as np

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics

        from .env import compact_online, offline_env, online_env
        from .mnl import enumerate_assortments, kappa

        limit_threads()  # one BLAS thread on any machine: its revenues' last bits depend on the count
        p = ctx.params.prepare
        A = enumerate_assortments(p.n_items, p.capacity)
        arrays = {"assortments": A, "seeds": np.array(ctx.seeds), "horizon": np.array(p.horizon),
                  "radii": np.array(p.radii, dtype=float)}
        per_seed, times = {}, {"online_env": 0.0, "offline_env": 0.0, "highs_check": 0.0}
        for seed in ctx.seeds:
            t0 = time.perf_counter()
            on = online_env(p, seed, A)
            t1 = time.perf_counter()
            off = offline_env(p, seed, A)
            t2 = time.perf_counter()
            check = highs_check(on, off, p, A)
            t3 = time.perf_counter()
            times["online_env"] += t1 - t0
            times["offline_env"] += t2 - t1
            times["highs_check"] += t3 - t2
            if check["max_abs_revenue_diff"] > p.highs_tolerance:
                fail(f"seed {seed}: the enumerated optimum differs from HiGHS's LP by "
                     f"{check['max_abs_revenue_diff']:.2e} (> highs_tolerance = {p.highs_tolerance:g})")
            arrays.update({f"s{seed}_on_{k}": v for k, v in compact_online(on).items()})
            arrays.update({f"s{seed}_off_{k}": v for k, v in off.items()})
            n_star_logged = (off["logged"] == off["star"][:, :, None, None])
            per_seed[seed] = {
                "online": {"optimal_revenue_mean": {str(B): float(on["best_rev"][b, 0].mean())
                                                    for b, B in enumerate(p.radii)}},
                "offline": {"optimal_revenue_mean": {str(B): float(off["star_rev"][b].mean())
                                                     for b, B in enumerate(p.radii)},
                            "optimal_logged_share": float(n_star_logged.mean()),
                            "optimal_logged_at_smallest_n_mean": float(
                                n_star_logged[..., :p.offline_n[0]].sum(-1).mean())},
                "highs": check,
            }
            print(f"  seed {seed}: online {p.runs} runs x {p.horizon} rounds ({p.online_task}; {t1 - t0:.1f}s), "
                  f"offline {len(p.radii)} radii x {p.offline_instances} problems x {p.offline_reps} data sets of "
                  f"n = {p.offline_n[-1]} ({t2 - t1:.1f}s); HiGHS vs enumeration on {check['problems']} problems: "
                  f"max |diff| {check['max_abs_revenue_diff']:.2e} ({t3 - t2:.1f}s)", flush=True)
        # timings go to MLflow only: the metrics file must be identical for identical params
        ctx.run.log_metrics({f"time.{k}_s": v for k, v in times.items()})
        write_npz(ctx.path(ENV), arrays)
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(
            per_seed, n_assortments=len(A),
            kappa_inverse={str(B): 1.0 / kappa(B, p.capacity) for B in p.radii}))


if __name__ == "__main__":
    main()
