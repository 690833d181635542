"""mnl_assortment train: the online UCB with every arm's confidence width, and the offline sweep,
for every verdict seed (``ctx.seeds``), in one process.

1. Online (stages/mnl_assortment/online.py): every (arm, radius, run) of a verdict seed in one
   batch; per-round expected-revenue regret against the enumerated optimum, and the estimate's
   distance from theta* in both norms at every refit. Arms (``online.ARMS``): ``new`` (the paper's Hessian-norm region, kappa-free radius
   beta_t), ``old`` (Oh & Iyengar's Gram-norm region, beta_t / (2 kappa)), ``gram`` (the Gram
   norm with the kappa-free radius: Oh & Iyengar's region with its kappa dropped, no Hessian) and
   ``greedy`` (the plug-in MLE's best assortment, no width).
2. Offline (stages/mnl_assortment/offline.py): plug-in, new-region and old-region pessimism on
   every logged data set of a seed, for every n.
3. Cross-checks against the library MLE: per seed, the final estimates of the first
   ``scipy_check_online`` online runs and the first ``scipy_check_offline`` offline estimates are
   refitted with scipy.optimize.minimize (trust-exact, analytic gradient and Hessian); the stage
   stops if one differs by more than ``mle_tolerance`` (tests/mnl_assortment/test_mnl.py checks
   the same on its own data). Recorded as context: whether theta* lies in each region at T and the
   median ratio of the two regions' item widths.

The seeds run one after another in this process (``simulate_seeds``: one batch of all five seeds
took 1.21-1.27x its CPU time, benchmarks/mnl_assortment/seeds.py). Every run's arithmetic is its
own, so a seed's figures are the same whichever seeds share the batch
(tests/mnl_assortment/test_seeds.py).

Outputs: data/mnl_assortment/results.npz (evaluate reads it), reports/mnl_assortment/train.json.
"""
from __future__ import annotations

import time

from stages.common.io import write_npz
from stages.common.runtime.stage import fail, stage

from .params import MnlAssortmentParams
from .paths import ENV, RESULTS, TRAIN_METRICS


def scipy_check_online(out: dict, ridge: float, rows) -> float:
    """Largest |theta_newton - theta_scipy| over the final estimates of the online runs ``rows``."""
    import numpy as np

    from .mnl import scipy_mle

    worst = 0.0
    for k in rows:
        res = scipy_mle(out["X"][k], out["mask"][k], out["y"][k], ridge)
        worst = max(worst, float(np.max(np.abs(res.x - out["theta"][k]))))
    return worst


def scipy_check_offline(off_env: dict, off: dict, assortments, n_grid, ridge: float, instances, count: int
                        ) -> tuple[float, int]:
    """Largest |theta_newton - theta_scipy| over the first ``count`` offline fits of the instances
    ``instances`` (radius, n, instance order; replication 0)."""
    import numpy as np

    from .mnl import scipy_mle

    nb = off["theta"].shape[0]
    worst, done = 0.0, 0
    N = off_env["x"].shape[2]
    for b in range(nb):
        for k, n in enumerate(n_grid):
            for i in instances:
                if done >= count:
                    return worst, done
                items = assortments[off_env["logged"][b, i, 0, :n]]
                mask = items < N
                xp = np.concatenate([off_env["x"][b, i], np.zeros((1, off_env["x"].shape[-1]))])
                X = np.where(mask[..., None], xp[items], 0.0)
                res = scipy_mle(X, mask, off_env["choices"][b, i, 0, :n], ridge)
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
    return {"beta_T": beta, "in_new": h_norm <= beta, "in_old": v_norm * 2 * out["kappa"] <= beta,
            "width_ratio_old_over_new": np.median(wo / wn, axis=1)}


def simulate(pp, tp, seeds, on_envs: dict, off_envs: dict, assortments, arms=None, progress: bool = True,
             offline: bool = True) -> dict:
    """The online runs of every seed in one batch and the offline sweep of every seed in one
    batch. ``on_envs`` / ``off_envs``: {seed: env.online_env / env.offline_env}. Returns the
    online output (``online.run_online``) with ``run_seed`` (the verdict seed of each run) and
    ``run_index`` (its run within the seed), and the offline output with ``instance_seed``."""
    import numpy as np

    from .env import stack_offline, stack_online
    from .offline import run_offline
    from .online import ARMS, run_online

    arms = ARMS if arms is None else arms
    on = stack_online([on_envs[s] for s in seeds])
    runs = on_envs[seeds[0]]["dirs"].shape[0]
    t0 = time.perf_counter()
    out = run_online({f"on_{k}": v for k, v in on.items()}, assortments, pp.n_items, pp.capacity, tp.ridge,
                     tp.refit_growth, tp.newton_tol, tp.newton_max_iter, arms=arms, progress=progress)
    out["online_seconds"] = time.perf_counter() - t0
    out["run_index"] = out["run_seed"] % runs
    out["run_seed"] = np.array(seeds)[out["run_seed"] // runs]
    out["arms"] = np.array([a.name for a in arms])
    if not offline:
        return {"online": out}
    off_env = stack_offline([off_envs[s] for s in seeds])
    t0 = time.perf_counter()
    off = run_offline({f"off_{k}": v for k, v in off_env.items()}, assortments, pp.offline_n, pp.capacity,
                      tp.ridge, tp.pessimism_delta, tp.newton_tol, tp.newton_max_iter, progress=progress)
    off["offline_seconds"] = time.perf_counter() - t0
    off["instance_seed"] = np.repeat(np.array(seeds), pp.offline_instances)
    off["env"] = off_env
    return {"online": out, "offline": off}


def results_arrays(sim: dict, seeds, pp) -> dict:
    """What results.npz holds (evaluate.seed_results reads one seed's rows of it) from
    :func:`simulate`'s output."""
    import numpy as np

    out, off = sim["online"], sim.get("offline")
    arrays = {"seeds": np.array(seeds), "arms": out["arms"], "radii": np.array(pp.radii, dtype=float),
              "regret": out["regret"], "run_arm": out["run_method"], "run_radius": out["run_radius"],
              "run_seed": out["run_seed"], "run_index": out["run_index"], "kappa": out["kappa"],
              "theta": out["theta"], "theta_star": out["theta_star"], "refit_rounds": out["refit_rounds"],
              "region_h": out["region_h"], "region_v": out["region_v"]}
    if off is not None:
        arrays.update({"offline_n": np.array(pp.offline_n), "offline_instance_seed": off["instance_seed"],
                       "offline_theta": off["theta"],
                       **{f"offline_sub_{k}": v for k, v in off["suboptimality"].items()},
                       **{f"offline_pick_{k}": v for k, v in off["picks"].items()},
                       "offline_star": off["env"]["star"], "offline_habitual": off["env"]["habitual"]})
    return arrays


ONLINE_PER_RUN = ("regret", "chosen", "theta", "theta_star", "H", "V", "run_method", "run_radius", "run_seed",
                  "run_index", "X", "mask", "y", "kappa", "region_h", "region_v")


def simulate_seeds(pp, tp, seeds, on_envs: dict, off_envs: dict, assortments, arms=None, progress: bool = True,
                   offline: bool = True) -> dict:
    """:func:`simulate` one verdict seed after another (a batch of 4 arms x radii x runs per seed),
    its outputs joined as if the seeds had run in one batch (the runs and instances seed after
    seed). All five seeds in one batch took 1.21-1.27x the CPU time of one seed at a time, which gives
    every run the same figures bit for bit (benchmarks/mnl_assortment/seeds.py): the arrays of
    five seeds' runs outgrow the caches."""
    import numpy as np

    from .env import stack_offline

    parts = []
    for i, s in enumerate(seeds):
        t0 = time.perf_counter()
        parts.append(simulate(pp, tp, [s], on_envs, off_envs, assortments, arms, progress=progress, offline=offline))
        if progress:
            print(f"  seed {s} ({i + 1}/{len(seeds)}) simulated in {time.perf_counter() - t0:.1f}s", flush=True)
    on = {k: np.concatenate([q["online"][k] for q in parts]) for k in ONLINE_PER_RUN}
    first = parts[0]["online"]
    on.update({k: first[k] for k in ("arms", "refits", "refit_rounds")})
    for k in ("online_seconds", "newton_seconds", "newton_iterations"):
        on[k] = sum(q["online"][k] for q in parts)
    out = {"online": on}
    if offline:
        offs = [q["offline"] for q in parts]
        out["offline"] = {
            "suboptimality": {k: np.concatenate([o["suboptimality"][k] for o in offs], axis=2) for k in offs[0]["suboptimality"]},
            "picks": {k: np.concatenate([o["picks"][k] for o in offs], axis=2) for k in offs[0]["picks"]},
            "theta": np.concatenate([o["theta"] for o in offs], axis=2), "q": offs[0]["q"],
            "newton_iterations": sum(o["newton_iterations"] for o in offs),
            "offline_seconds": sum(o["offline_seconds"] for o in offs),
            "instance_seed": np.concatenate([o["instance_seed"] for o in offs]),
            "env": stack_offline([o["env"] for o in offs])}
    return out


def main() -> None:
    with stage("mnl_assortment", "train", MnlAssortmentParams) as ctx:
        import numpy as np

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics

        from .env import expand_online, online_dim

        limit_threads()
        pp, tp = ctx.params.prepare, ctx.params.train
        seeds = list(ctx.seeds)
        with np.load(ctx.path(ENV)) as z:
            env = {k: z[k] for k in z.files}
        have = [int(s) for s in env["seeds"]]
        if have != seeds or int(env["horizon"]) != pp.horizon or list(env["radii"]) != list(pp.radii):
            fail(f"{ENV} was made for seeds {have}, T = {int(env['horizon'])}, radii {list(env['radii'])}; the "
                 f"profile has seeds {seeds}, T = {pp.horizon}, radii {list(pp.radii)}: run "
                 f"`dvc repro stages/mnl_assortment/dvc.yaml:mnl_assortment-prepare`")
        A = env["assortments"]
        on_envs = {s: expand_online({k[len(f"s{s}_on_"):]: v for k, v in env.items() if k.startswith(f"s{s}_on_")})
                   for s in seeds}
        off_envs = {s: {k[len(f"s{s}_off_"):]: v for k, v in env.items() if k.startswith(f"s{s}_off_")}
                    for s in seeds}
        sim = simulate_seeds(pp, tp, seeds, on_envs, off_envs, A)
        out, off = sim["online"], sim["offline"]
        t0 = time.perf_counter()
        per_seed = {}
        for s in seeds:
            rows = np.flatnonzero((out["run_seed"] == s) & (out["run_index"] < tp.scipy_check_online))
            on_diff = scipy_check_online(out, tp.ridge, rows)
            inst = np.flatnonzero(off["instance_seed"] == s)
            off_diff, off_checked = scipy_check_offline(off["env"], off, A, pp.offline_n, tp.ridge, inst,
                                                        tp.scipy_check_offline)
            worst = max(on_diff, off_diff)
            if worst > tp.mle_tolerance:
                fail(f"seed {s}: the batched Newton MLE differs from scipy.optimize.minimize by {worst:.2e} "
                     f"(> mle_tolerance = {tp.mle_tolerance:g})")
            per_seed[s] = {"mle": {"max_abs_diff_vs_scipy": worst, "online_max_abs_diff": on_diff,
                                   "offline_max_abs_diff": off_diff, "scipy_fits": len(rows) + off_checked}}
        t_scipy = time.perf_counter() - t0
        reg = region_checks(out, pp.horizon, online_dim(pp), pp.capacity)
        arms = [str(a) for a in out["arms"]]
        for s in seeds:
            mine = out["run_seed"] == s
            per_seed[s]["online"] = {
                f"in_region_at_T_{name}": float(reg[key][mine & (out["run_method"] == arms.index(name))].mean())
                for name, key in (("new", "in_new"), ("old", "in_old"))}
            per_seed[s]["online"]["width_ratio_old_over_new_median"] = float(
                np.median(reg["width_ratio_old_over_new"][mine & (out["run_method"] == arms.index("new"))]))
        write_npz(ctx.path(RESULTS), results_arrays(sim, seeds, pp))
        metrics = per_seed_metrics(per_seed, sizes={"online_runs": int(len(out["run_seed"])), "refits": out["refits"],
                                                    "online_newton_iterations": out["newton_iterations"],
                                                    "beta_T": reg["beta_T"], "offline_q": off["q"],
                                                    "offline_newton_iterations": off["newton_iterations"]})
        # timings go to MLflow only: the metrics file must be identical for identical params
        ctx.run.log_metrics({"time.online_s": out["online_seconds"], "time.online_newton_s": out["newton_seconds"],
                             "time.offline_s": off["offline_seconds"], "time.scipy_check_s": t_scipy})
        write_json(ctx.path(TRAIN_METRICS), metrics)
        print(f"  {len(seeds)} seeds: online {out['online_seconds']:.1f}s ({len(out['run_seed'])} runs, "
              f"{out['refits']} refits, Newton {out['newton_seconds']:.1f}s), offline {off['offline_seconds']:.1f}s, "
              f"scipy check {t_scipy:.1f}s: max |theta diff| "
              f"{max(m['mle']['max_abs_diff_vs_scipy'] for m in per_seed.values()):.1e}", flush=True)


if __name__ == "__main__":
    main()
