"""mnl_assortment prepare: the online and offline problems, generated from the seed, with their
optimal assortments (enumeration) checked against HiGHS.

* Online: features, revenues, choice uniforms and theta* directions of ``seeds`` runs of T rounds
  (stages/mnl_assortment/env.py), and for every radius the per-round optimal expected revenue by
  enumerating all sum_{k<=K} C(N, k) assortments (385 for N = 10, K = 4) in log space.
* Offline: per radius, ``offline_instances`` problems, each with ``offline_reps`` logged data sets
  of the largest n from a behaviour policy that rarely shows the optimal assortment.
* Check: on ``highs_check_rounds`` random rounds per radius and on every offline problem, the
  enumerated optimum against the HiGHS solution of the Davis-Gallego-Topaloglu LP (the library
  answer): largest |revenue difference|, and whether HiGHS's assortment has the same revenue.

Outputs: data/mnl_assortment/env.npz (the problems), reports/mnl_assortment/prepare.json.
"""
from __future__ import annotations

import time

from stages.common.io import write_npz
from stages.common.runtime.stage import stage

from .params import MnlAssortmentParams
from .paths import ENV, PREPARE_METRICS

RNG_CHECK = 3


def highs_check(on: dict, off: dict, p, assortments, seed: int) -> dict:
    """Enumeration vs the HiGHS LP on random online rounds and on every offline problem."""
    import numpy as np

    from .mnl import highs_assortment, revenue

    rng = np.random.default_rng([seed, RNG_CHECK])
    worst, worst_support, n = 0.0, 0.0, 0
    t0 = time.perf_counter()
    problems = []
    for b, B in enumerate(on["radii"]):
        picks = rng.choice(p.horizon * p.seeds, size=p.highs_check_rounds, replace=False)
        for k in picks:
            t, s = divmod(int(k), p.seeds)
            problems.append((on["feats"][t, s] @ (B * on["dirs"][s]), on["revs"][t, s], on["best_rev"][b, t, s]))
    for b in range(len(p.radii)):
        for i in range(p.offline_instances):
            problems.append((off["x"][b, i] @ off["theta"][b, i], off["r"][b, i], off["star_rev"][b, i]))
    for u, r, best in problems:
        val, items = highs_assortment(u, r, p.capacity)
        sup = float(revenue(u[items], r[items], np.arange(len(items))[None, :])[0])   # HiGHS's S, exactly
        worst = max(worst, abs(val - best))
        worst_support = max(worst_support, abs(sup - best))
        n += 1
    return {"problems": n, "max_abs_revenue_diff": worst, "max_abs_support_revenue_diff": worst_support,
            "_seconds": time.perf_counter() - t0}


def main() -> None:
    with stage("mnl_assortment", "prepare", MnlAssortmentParams) as ctx:

        from stages.common.io import write_json

        from .env import offline_env, online_env
        from .mnl import enumerate_assortments, kappa

        p = ctx.params.prepare
        A = enumerate_assortments(p.n_items, p.capacity)
        t0 = time.perf_counter()
        on = online_env(p, ctx.seed, A)
        t_on = time.perf_counter() - t0
        t0 = time.perf_counter()
        off = offline_env(p, ctx.seed, A)
        t_off = time.perf_counter() - t0
        check = highs_check(on, off, p, A, ctx.seed)
        t_highs = check.pop("_seconds")
        # timings go to MLflow only: the metrics file must be identical for identical params
        ctx.run.log_metrics({"time.online_env_s": t_on, "time.offline_env_s": t_off, "time.highs_check_s": t_highs})
        print(f"  {len(A)} assortments; online {p.seeds} seeds x {p.horizon} rounds ({t_on:.1f}s); offline "
              f"{len(p.radii)} radii x {p.offline_instances} problems x {p.offline_reps} data sets of "
              f"n = {p.offline_n[-1]} ({t_off:.1f}s); HiGHS vs enumeration on {check['problems']} problems: "
              f"max |diff| {check['max_abs_revenue_diff']:.2e} ({t_highs:.1f}s)", flush=True)
        write_npz(ctx.path(ENV), {"assortments": A, **{f"on_{k}": v for k, v in on.items()},
                                 **{f"off_{k}": v for k, v in off.items()}})
        n_star_logged = (off["logged"] == off["star"][:, :, None, None])
        write_json(ctx.path(PREPARE_METRICS), {
            "n_assortments": len(A),
            "kappa_inverse": {str(B): 1.0 / kappa(B, p.capacity) for B in p.radii},
            "online": {"optimal_revenue_mean": {str(B): float(on["best_rev"][b].mean())
                                                for b, B in enumerate(p.radii)}},
            "offline": {"optimal_revenue_mean": {str(B): float(off["star_rev"][b].mean())
                                                 for b, B in enumerate(p.radii)},
                        "optimal_logged_share": float(n_star_logged.mean()),
                        "optimal_logged_at_smallest_n_mean": float(
                            n_star_logged[..., :p.offline_n[0]].sum(-1).mean())},
            "highs": check,
        })


if __name__ == "__main__":
    main()
