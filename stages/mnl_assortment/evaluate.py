"""mnl_assortment evaluate: each verdict seed's figures (regret slopes and ratios, the confidence
regions' reach, the offline comparison), plots; reports/mnl_assortment/metrics.json is what
claims.yaml reads (``per_seed``: one verdict seed's figures; beside it the mean over the seeds,
stages.common.seeds.per_seed_metrics).

A verdict seed's figures are read off its own runs (``runs`` per radius and arm) and offline data
sets only:

* ``online.B<radius>.<arm>.slope``: least-squares slope of log(mean cumulative regret over the
  seed's runs) on log t at ``fit_points`` log-spaced t in [fit_from T, T] (the algorithms are
  anytime, so the cumulative regret at t is the regret of horizon t; checkpoints where the mean is
  0 are left out, and a curve that is 0 throughout has slope 0); ``slope_ci``: scipy's BCa
  interval over the seed's runs (stages/common/inference.py), context. ``regret_T``: mean
  cumulative regret at T. ``ratio``: old / new regret at T, ``ratio_gram``: old / gram.
* ``online.<arm>_slope_max`` / ``_min``, ``ratio_min``, ``ratio_gram_min``: the worst radius,
  what the claims read ("at every radius").
* ``online.region``: the largest ||theta_hat - theta*|| / beta_t over the seed's runs, the radii
  and the refits at t >= fit_from T, in the Hessian norm for the ``new`` arm (``new_max``), in the
  Gram norm for the ``gram`` arm (``gram_max``: Oh & Iyengar's region with its 1/(2 kappa)
  dropped) and times 2 kappa for the ``old`` arm (``old_max``); <= 1 means theta* stayed in that
  region at every refit of every run.
* ``offline``: mean suboptimality R(S*) - R(S_hat) of each rule at each n over the seed's
  instance x replication data sets (scipy's BCa interval, context); ``smallest_n``: the same
  pooled over the radii and the paired differences new - plug-in and new - old.
"""
from __future__ import annotations

from stages.common.fits import loglog_slope
from stages.common.runtime.stage import fail, stage

from .params import MnlAssortmentParams
from .paths import CSV_OFFLINE, CSV_REGRET, METRICS, PLOT_OFFLINE, PLOT_REGRET, PREPARE_METRICS, RESULTS, TRAIN_METRICS

RNG_BOOT = 21
ARM_NAMES = {"new": "new: MLE-Hessian norm, beta_t", "old": "old (Oh & Iyengar): Gram norm, beta_t / (2 kappa)",
             "gram": "gram: Gram norm, beta_t (kappa dropped)", "greedy": "greedy: plug-in MLE, no width"}
ARM_COLOURS = {"new": "C0", "old": "C3", "gram": "C1", "greedy": "C2"}
RULE_NAMES = {"plugin": "plug-in MLE", "new": "pessimism, new region", "old": "pessimism, old region (PASTA-style)"}


def radius_key(B: float) -> str:
    """'B1', 'B0p25': a metrics key without dots (claims look metrics up by dotted paths)."""
    return "B" + f"{B:g}".replace(".", "p")


def checkpoints(T: int, fit_from: float, n: int):
    """About n distinct integer rounds, log-spaced over [fit_from T, T], T included."""
    import numpy as np

    return np.unique(np.round(np.geomspace(max(1.0, fit_from * T), T, n)).astype(int))


def curve_slope(t, mean) -> tuple[float, float]:
    """(slope, intercept) of log mean on log t over the checkpoints where the mean is positive
    (at least 3 of them); a curve that is 0 at all but two or fewer checkpoints is flat: (0, nan)."""
    import numpy as np

    mean = np.asarray(mean, dtype=float)
    ok = mean > 0
    if ok.sum() < 3:
        return 0.0, float("nan")
    return loglog_slope(np.asarray(t)[ok], mean[ok])


def boot_slopes(t, curves, idx):
    """Slopes of the mean curve for each bootstrap resample: curves (runs, len(t)), idx (B, runs)."""
    import numpy as np

    from stages.common.fits import loglog_slopes

    means = curves[idx].mean(1)                                          # (B, len(t))
    ok = (means > 0).all(1)
    return np.where(ok, loglog_slopes(t, means), np.nan)


def over_runs(fn):
    """A statistic of resampled run indices for :func:`stages.common.inference.bootstrap_interval`
    (scipy's bootstrap resamples ``arange(runs)``; ``fn`` maps index rows (rows, k) to (rows,)):
    resampling indices lets one statistic read several arrays of the same runs, paired."""
    import numpy as np

    def stat(i, axis=-1):
        i = np.moveaxis(np.asarray(i), axis, -1).astype(int)
        return np.asarray(fn(i.reshape(-1, i.shape[-1]))).reshape(i.shape[:-1])

    return stat


def run_interval(fn, runs: int, ep, seed: int) -> list[float]:
    """scipy's BCa interval (level ``ep.ci_level``, ``ep.n_boot`` resamples) of ``fn`` over the runs."""
    import numpy as np

    from stages.common.inference import bootstrap_interval

    return list(bootstrap_interval(np.arange(runs), over_runs(fn), confidence=ep.ci_level,
                                   n_resamples=ep.n_boot, seed=seed))


def online_seed_metrics(res: dict, ep, rng) -> dict:
    """One verdict seed's online figures. ``res``: that seed's runs, with ``regret`` (runs, T),
    ``run_arm`` / ``run_radius`` / ``run_index`` (the run within its arm and radius), ``arms``
    (names), ``radii``, ``kappa`` (per run), ``region_h`` / ``region_v`` (runs, refits) and
    ``refit_rounds``."""
    import numpy as np

    cum = np.cumsum(res["regret"], axis=1)                              # (runs, T)
    T = cum.shape[1]
    t = checkpoints(T, ep.fit_from, ep.fit_points)
    arms = [str(a) for a in res["arms"]]
    radii = [float(B) for B in res["radii"]]
    out = {"checkpoints": t.tolist(), "T": int(T), "radii": radii, "arms": arms}
    late = res["refit_rounds"] >= ep.fit_from * T
    keys = [radius_key(B) for B in radii]
    region = {"new_max": 0.0, "gram_max": 0.0, "old_max": 0.0, "by_radius": {}}
    for b, B in enumerate(radii):
        entry, final = {}, {}
        for m, name in enumerate(arms):
            sel = (res["run_arm"] == m) & (res["run_radius"] == b)
            order = np.argsort(res["run_index"][sel])
            curves = cum[sel][order][:, t - 1]                           # (runs, len(t))
            mean = curves.mean(0)
            slope, icpt = curve_slope(t, mean)
            final[name] = cum[sel][order][:, -1]
            runs = len(order)
            ci = (run_interval(lambda i, c=curves: boot_slopes(t, c, i), runs, ep, int(rng.integers(2**32)))
                  if (curves > 0).all() else [float("nan"), float("nan")])
            entry[name] = {"slope": slope, "intercept": icpt, "slope_ci": ci,
                           "regret_T": float(final[name].mean()), "regret_T_runs": final[name].tolist(),
                           "mean_curve": mean.tolist()}
        for base, key in (("new", "ratio"), ("gram", "ratio_gram")):
            if base in final and "old" in final:
                fo, fb = final["old"], final[base]
                entry[key] = float(fo.mean() / fb.mean())
                entry[f"{key}_ci"] = run_interval(lambda i, a=fo, c=fb: a[i].mean(1) / c[i].mean(1), len(fo), ep,
                                                  int(rng.integers(2**32)))
        entry["kappa_inverse"] = float(1.0 / res["kappa"][res["run_radius"] == b][0])
        reach = {}
        for name, arr, factor in (("new", "region_h", 1.0), ("gram", "region_v", 1.0),
                                  ("old", "region_v", 2.0 * float(res["kappa"][res["run_radius"] == b][0]))):
            if name in arms:
                sel = (res["run_arm"] == arms.index(name)) & (res["run_radius"] == b)
                worst = res[arr][sel][:, late].max(1) * factor                # per run, over the refits
                reach[name] = {"max": float(worst.max()), "covered_share": float((worst <= 1.0).mean()),
                               "at_T_max": float(res[arr][sel][:, -1].max() * factor),
                               "max_all_refits": float(res[arr][sel].max() * factor)}
                region[f"{name}_max"] = max(region[f"{name}_max"], reach[name]["max"])
        region["by_radius"][keys[b]] = reach
        entry["region"] = reach
        out[keys[b]] = entry
    for name in arms:
        slopes = [out[k][name]["slope"] for k in keys]
        out[f"{name}_slope_max"] = max(slopes)
        out[f"{name}_slope_min"] = min(slopes)
        out[f"{name}_regret_T"] = {k: out[k][name]["regret_T"] for k in keys}
    if "new" in arms and "old" in arms:
        out["ratio_min"] = min(out[k]["ratio"] for k in keys)
        out["ratio_by_radius"] = {k: out[k]["ratio"] for k in keys}
    if "gram" in arms and "old" in arms:
        out["ratio_gram_min"] = min(out[k]["ratio_gram"] for k in keys)
    out["region"] = {k: v for k, v in region.items() if k == "by_radius" or k[:-4] in arms}
    return out


def mean_ci(v, n_boot: int, level: float, rng, method: str = "BCa") -> tuple[float, list]:
    """Mean of a flat array and scipy's BCa bootstrap interval of it (or its other ``method``;
    stages/common/inference.py), ``n_boot`` resamples; its seed is drawn from ``rng``, so the
    calls' intervals are deterministic and independent. Zero spread gives [mean, mean]."""
    import numpy as np

    from stages.common.inference import bootstrap_interval

    v = np.asarray(v, dtype=float).ravel()
    lo, hi = bootstrap_interval(v, confidence=level, method=method, n_resamples=n_boot,
                                seed=int(rng.integers(2**32)))
    return float(v.mean()), [lo, hi]


def offline_metrics(res: dict, ep, rng) -> dict:
    """One verdict seed's offline figures: ``res`` holds ``offline_sub_<rule>`` (radius, n,
    instance, replication) of that seed's instances, ``offline_n``, ``radii``,
    ``offline_pick_new`` and ``offline_star``."""
    ns = res["offline_n"].tolist()
    radii = res["radii"]
    sub = {k: res[f"offline_sub_{k}"] for k in ("plugin", "new", "old")}   # (radius, n, inst, rep)
    out = {"n": ns}
    for b, B in enumerate(radii):
        e = {}
        for k, v in sub.items():
            stats = [mean_ci(v[b, j], ep.n_boot, ep.ci_level, rng) for j in range(len(ns))]
            e[k] = {"mean": [s[0] for s in stats], "ci": [s[1] for s in stats],
                    "found_optimum": [float((v[b, j] <= 1e-12).mean()) for j in range(len(ns))]}
            e[k]["slope"] = loglog_slope(ns, e[k]["mean"])[0]
        out[radius_key(B)] = e
    small = {}
    for k, v in sub.items():
        small[k], small[f"{k}_ci"] = mean_ci(v[:, 0], ep.n_boot, ep.ci_level, rng)
    for other in ("plugin", "old"):
        d, ci = mean_ci(sub["new"][:, 0] - sub[other][:, 0], ep.n_boot, ep.ci_level, rng)
        small[f"new_minus_{other}"], small[f"new_minus_{other}_ci"] = d, ci
    small["n"] = ns[0]
    small["by_radius"] = {radius_key(B): {k: float(sub[k][b, 0].mean()) for k in sub} for b, B in enumerate(radii)}
    out["smallest_n"] = small
    largest = {k: float(v[:, -1].mean()) for k, v in sub.items()}
    largest["n"] = ns[-1]
    out["largest_n"] = largest
    star_hits = (res["offline_pick_new"] == res["offline_star"][:, None, :, None])
    out["new_found_optimum_share_largest_n"] = float(star_hits[:, -1].mean())
    return out


def seed_results(res: dict, seed: int) -> dict:
    """The rows of ``results.npz`` (train's output, every seed side by side) that belong to one
    verdict seed: its online runs and its offline instances."""
    on = res["run_seed"] == seed
    out = {k: res[k][on] for k in ("regret", "run_arm", "run_radius", "run_index", "kappa", "region_h", "region_v")}
    out.update({k: res[k] for k in ("arms", "radii", "refit_rounds")})
    if "offline_instance_seed" not in res:
        return out
    inst = res["offline_instance_seed"] == seed
    out["offline_n"] = res["offline_n"]
    for k in res:
        if k.startswith("offline_sub_") or k.startswith("offline_pick_"):
            out[k] = res[k][:, :, inst]
    out["offline_star"] = res["offline_star"][:, inst]
    return out


def seed_metrics(res: dict, seed: int, ep) -> dict:
    """Every figure of one verdict seed (online and offline), its bootstrap seeds drawn from the seed."""
    import numpy as np

    rng = np.random.default_rng([seed, RNG_BOOT])
    r = seed_results(res, seed)
    out = {"online": online_seed_metrics(r, ep, rng)}
    if "offline_n" in r:
        out["offline"] = offline_metrics(r, ep, rng)
    return out


def plot_regret(per_seed: dict, path) -> None:
    """Per radius: each arm's mean cumulative regret (mean over the verdict seeds of each seed's
    mean curve; the band spans the seeds' curves) on log-log axes."""
    import numpy as np

    from stages.common.plots import new_figure, save_png

    first = next(iter(per_seed.values()))["online"]
    radii, arms = first["radii"], first["arms"]
    t = np.array(first["checkpoints"], dtype=float)
    fig, axes = new_figure(1, len(radii), figsize=(5.0 * len(radii), 4.4), squeeze=False)
    for ax, B in zip(axes[0], radii):
        k = radius_key(B)
        for name in arms:
            curves = np.array([m["online"][k][name]["mean_curve"] for m in per_seed.values()])
            slopes = [m["online"][k][name]["slope"] for m in per_seed.values()]
            c = ARM_COLOURS.get(name, "k")
            lo = np.maximum(curves.min(0), 1e-3)
            ax.fill_between(t, lo, np.maximum(curves.max(0), 1e-3), color=c, alpha=0.2)
            ax.plot(t, np.maximum(curves.mean(0), 1e-3), "o-", ms=3, lw=1, color=c,
                    label=f"{ARM_NAMES.get(name, name)}: slope {np.mean(slopes):.2f} "
                          f"({min(slopes):.2f}-{max(slopes):.2f})")
        ax.plot(t, np.sqrt(t / t[-1]) * np.mean([m["online"][k]["new"]["regret_T"] for m in per_seed.values()]),
                ":", color="grey", label=r"$\propto\sqrt{t}$")
        kinv = first[k]["kappa_inverse"]
        ax.set(xscale="log", yscale="log", xlabel="round t", title=f"B = {B:g} (1/kappa = {kinv:.3g})")
        ax.legend(fontsize=6, loc="upper left")
    axes[0][0].set_ylabel(f"cumulative regret (mean over runs; band: {len(per_seed)} verdict seeds)")
    save_png(fig, path)


def plot_offline(per_seed: dict, path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    first = next(iter(per_seed.values()))["offline"]
    ns = np.array(first["n"], dtype=float)
    radii = [k for k in first if k.startswith("B")]
    fig, axes = new_figure(1, len(radii), figsize=(5.0 * len(radii), 4.2), squeeze=False)
    for ax, key in zip(axes[0], radii):
        for rule, color in (("plugin", "C2"), ("new", "C0"), ("old", "C3")):
            means = np.array([m["offline"][key][rule]["mean"] for m in per_seed.values()])
            ax.fill_between(ns, means.min(0), means.max(0), color=color, alpha=0.2)
            ax.plot(ns, means.mean(0), "o-", ms=3, color=color, label=RULE_NAMES[rule])
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=1e-4)        # suboptimality is >= 0 and can be exactly 0
        ax.set_ylim(bottom=0)
        ax.set(xlabel="logged rounds n", title=f"offline, B = {key[1:].replace('p', '.')}")
        ax.legend(fontsize=7, loc="lower left")
    axes[0][0].set_ylabel(f"mean suboptimality (band: {len(per_seed)} verdict seeds)")
    save_png(fig, path)


def main() -> None:
    with stage("mnl_assortment", "evaluate", MnlAssortmentParams) as ctx:
        import json

        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import write_csv
        from stages.common.seeds import per_seed_metrics

        with np.load(ctx.path(RESULTS)) as z:
            res = {k: z[k] for k in z.files}
        seeds = [int(s) for s in res["seeds"]]
        if seeds != list(ctx.seeds):
            fail(f"{RESULTS} holds seeds {seeds}, the profile's verdict seeds are {ctx.seeds}; "
                 "run `dvc repro stages/mnl_assortment/dvc.yaml:mnl_assortment-train`")
        ep = ctx.params.evaluate
        prep = json.loads(ctx.path(PREPARE_METRICS).read_text())
        train = json.loads(ctx.path(TRAIN_METRICS).read_text())
        per_seed = {}
        for s in seeds:
            m = seed_metrics(res, s, ep)
            m["highs"] = prep["per_seed"][str(s)]["highs"]
            m["mle"] = train["per_seed"][str(s)]["mle"]
            m["offline"]["optimal_logged_at_smallest_n_mean"] = prep["per_seed"][str(s)]["offline"][
                "optimal_logged_at_smallest_n_mean"]
            per_seed[s] = m
        shared = {"kappa_inverse": prep["kappa_inverse"],
                  "highs_max_abs_revenue_diff_all": max(m["highs"]["max_abs_revenue_diff"] for m in per_seed.values()),
                  "mle_max_abs_diff_vs_scipy_all": max(m["mle"]["max_abs_diff_vs_scipy"] for m in per_seed.values())}
        write_json(ctx.path(METRICS), per_seed_metrics(per_seed, **shared))
        first = per_seed[seeds[0]]["online"]
        rows = []
        for j, t in enumerate(first["checkpoints"]):
            row = {"t": int(t)}
            for B in first["radii"]:
                k = radius_key(B)
                for name in first["arms"]:
                    row[f"{name}_{k}"] = float(np.mean([per_seed[s]["online"][k][name]["mean_curve"][j] for s in seeds]))
            rows.append(row)
        write_csv(ctx.path(CSV_REGRET), rows)
        off0 = per_seed[seeds[0]]["offline"]
        write_csv(ctx.path(CSV_OFFLINE), [
            {"n": n, **{f"{rule}_{k}": float(np.mean([per_seed[s]["offline"][k][rule]["mean"][j] for s in seeds]))
                        for k in off0 if k.startswith("B") for rule in ("plugin", "new", "old")}}
            for j, n in enumerate(off0["n"])])
        plot_regret(per_seed, ctx.path(PLOT_REGRET))
        plot_offline(per_seed, ctx.path(PLOT_OFFLINE))
        for s in seeds:
            on = per_seed[s]["online"]
            print(f"  seed {s}: slope max new {on['new_slope_max']:.2f} greedy {on['greedy_slope_max']:.2f} "
                  f"gram {on['gram_slope_max']:.2f}; region reach new {on['region']['new_max']:.2f} "
                  f"gram {on['region']['gram_max']:.2f}; old/new min {on['ratio_min']:.1f}, old/gram min "
                  f"{on['ratio_gram_min']:.1f}; offline new - plug-in "
                  f"{per_seed[s]['offline']['smallest_n']['new_minus_plugin']:+.4f}", flush=True)


if __name__ == "__main__":
    main()
