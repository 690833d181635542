"""mnl_assortment train: online UCB with both confidence widths, and the offline sweep.

1. Online (stages/mnl_assortment/online.py): every (method, radius, seed) run of T rounds at once;
   per-round expected-revenue regret against the enumerated optimum.
2. Offline (stages/mnl_assortment/offline.py): plug-in, new-region and old-region pessimism on
   every logged data set, for every n.
3. Cross-checks against the library MLE: every online run's final estimate (the ridge MLE on all
   T rounds) and the first ``scipy_check_offline`` offline estimates are refitted with
   scipy.optimize.minimize (trust-exact, analytic gradient and Hessian); the largest difference
   is recorded. Also recorded: whether theta* lies in each confidence region at T (coverage) and
   the ratio of the two regions' item widths.

Outputs: data/mnl_assortment/results.npz (evaluate reads it), reports/mnl_assortment/train.json.
"""
from __future__ import annotations

import time

from stages.common.io import write_npz
from stages.common.runtime.stage import fail, stage

from .params import MnlAssortmentParams
from .paths import ENV, RESULTS, TRAIN_METRICS


def scipy_check_online(out: dict, ridge: float) -> float:
    """Largest |theta_newton - theta_scipy| over the online runs' final estimates."""
    import numpy as np

    from .mnl import scipy_mle

    worst = 0.0
    for k in range(len(out["theta"])):
        res = scipy_mle(out["X"][k], out["mask"][k], out["y"][k], ridge)
        worst = max(worst, float(np.max(np.abs(res.x - out["theta"][k]))))
    return worst


def scipy_check_offline(env: dict, off: dict, assortments, n_grid, ridge: float, count: int) -> tuple[float, int]:
    """Largest |theta_newton - theta_scipy| over the first ``count`` offline fits (radius, n,
    instance order; replication 0)."""
    import numpy as np

    from .mnl import scipy_mle

    nb, nn, I = off["theta"].shape[:3]
    worst, done = 0.0, 0
    N = env["off_x"].shape[2]
    for b in range(nb):
        for k, n in enumerate(n_grid):
            for i in range(I):
                if done >= count:
                    return worst, done
                items = assortments[env["off_logged"][b, i, 0, :n]]
                mask = items < N
                xp = np.concatenate([env["off_x"][b, i], np.zeros((1, env["off_x"].shape[-1]))])
                X = np.where(mask[..., None], xp[items], 0.0)
                res = scipy_mle(X, mask, env["off_choices"][b, i, 0, :n], ridge)
                worst = max(worst, float(np.max(np.abs(res.x - off["theta"][b, k, i, 0]))))
                done += 1
    return worst, done


def region_checks(out: dict, T: int, d: int, capacity: int) -> dict:
    """Is theta* inside each region at T, and how wide is each (median item width ratio)?"""
    import numpy as np

    from .mnl import confidence_radius

    beta = float(confidence_radius(T, d, capacity))
    err = out["theta"] - out["theta_star"]
    h_norm = np.sqrt(np.einsum("rd,rde,re->r", err, out["H"], err))
    v_norm = np.sqrt(np.einsum("rd,rde,re->r", err, out["V"], err))
    # widths of the same random unit directions under both regions, per run
    rng = np.random.default_rng(0)
    g = rng.standard_normal((64, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    wn = np.sqrt(np.einsum("kd,rde,ke->rk", g, np.linalg.inv(out["H"]), g)) * beta
    wo = np.sqrt(np.einsum("kd,rde,ke->rk", g, np.linalg.inv(out["V"]), g)) * beta / (2 * out["kappa"][:, None])
    return {"beta_T": beta, "h_norm": h_norm, "v_norm_times_2kappa": v_norm * 2 * out["kappa"],
            "in_new": h_norm <= beta, "in_old": v_norm * 2 * out["kappa"] <= beta,
            "width_ratio_old_over_new": np.median(wo / wn, axis=1)}


def main() -> None:
    with stage("mnl_assortment", "train", MnlAssortmentParams) as ctx:
        import numpy as np

        from stages.common.device import limit_threads
        from stages.common.io import write_json

        from .offline import run_offline
        from .online import run_online

        limit_threads()
        pp, tp = ctx.params.prepare, ctx.params.train
        # the prepare params the data were made with are what dvc tracks for prepare; the ones
        # train needs (n grid, sizes) are read from the same profile
        with np.load(ctx.path(ENV)) as z:
            env = {k: z[k] for k in z.files}
        A = env["assortments"]
        if env["on_feats"].shape[0] != pp.horizon or list(env["on_radii"]) != list(pp.radii):
            fail(f"{ENV} was made with other prepare params (T = {env['on_feats'].shape[0]}, radii "
                 f"{list(env['on_radii'])}); run `dvc repro stages/mnl_assortment/dvc.yaml:mnl_assortment-prepare`")
        t0 = time.perf_counter()
        out = run_online(env, A, pp.n_items, pp.capacity, tp.ridge, tp.refit_growth, tp.newton_tol,
                         tp.newton_max_iter)
        t_online = time.perf_counter() - t0
        t0 = time.perf_counter()
        off = run_offline(env, A, pp.offline_n, pp.capacity, tp.ridge, tp.pessimism_delta, tp.newton_tol,
                          tp.newton_max_iter)
        t_offline = time.perf_counter() - t0
        t0 = time.perf_counter()
        on_diff = scipy_check_online(out, tp.ridge)
        off_diff, off_checked = scipy_check_offline(env, off, A, pp.offline_n, tp.ridge, tp.scipy_check_offline)
        t_scipy = time.perf_counter() - t0
        reg = region_checks(out, pp.horizon, pp.dim, pp.capacity)
        write_npz(ctx.path(RESULTS), {
            "regret": out["regret"], "chosen": out["chosen"], "run_method": out["run_method"],
            "run_radius": out["run_radius"], "run_seed": out["run_seed"], "radii": env["on_radii"],
            "theta": out["theta"], "theta_star": out["theta_star"], "kappa": out["kappa"],
            "in_new": reg["in_new"], "in_old": reg["in_old"], "h_norm": reg["h_norm"],
            "width_ratio_old_over_new": reg["width_ratio_old_over_new"],
            "offline_n": np.array(pp.offline_n), "offline_theta": off["theta"],
            **{f"offline_sub_{k}": v for k, v in off["suboptimality"].items()},
            **{f"offline_pick_{k}": v for k, v in off["picks"].items()},
            "offline_star": env["off_star"], "offline_habitual": env["off_habitual"],
        })
        new = out["run_method"] == 0
        metrics = {
            "online": {"runs": int(len(new)), "refits": out["refits"], "newton_iterations": out["newton_iterations"],
                       "coverage_new": float(reg["in_new"][new].mean()),
                       "coverage_old": float(reg["in_old"][~new].mean()),
                       "beta_T": reg["beta_T"],
                       "width_ratio_old_over_new_median": float(np.median(reg["width_ratio_old_over_new"]))},
            "offline": {"q": off["q"], "newton_iterations": off["newton_iterations"]},
            "mle": {"max_abs_diff_vs_scipy": max(on_diff, off_diff), "online_max_abs_diff": on_diff,
                    "offline_max_abs_diff": off_diff, "scipy_fits": int(len(new)) + off_checked},
        }
        # timings go to MLflow only: the metrics file must be identical for identical params
        ctx.run.log_metrics({"time.online_s": t_online, "time.online_newton_s": out["newton_seconds"],
                             "time.offline_s": t_offline, "time.scipy_check_s": t_scipy})
        write_json(ctx.path(TRAIN_METRICS), metrics)
        print(f"  online {t_online:.1f}s ({out['refits']} refits, Newton {out['newton_seconds']:.1f}s), offline "
              f"{t_offline:.1f}s, scipy check {t_scipy:.1f}s: max |theta diff| {metrics['mle']['max_abs_diff_vs_scipy']:.1e}; "
              f"coverage new {metrics['online']['coverage_new']:.2f} old {metrics['online']['coverage_old']:.2f}",
              flush=True)


if __name__ == "__main__":
    main()
