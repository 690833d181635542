"""mnl_assortment evaluate: regret slopes and ratios with intervals over seeds, the offline
comparison, plots; reports/mnl_assortment/metrics.json is what claims.yaml reads.

* ``online.B<radius>.<method>.slope``: least-squares slope of log(mean cumulative regret over the
  seeds) on log t at ``fit_points`` log-spaced t in [fit_from T, T] (the algorithms are anytime, so
  the cumulative regret at t is the regret of horizon t); its interval (scipy's BCa bootstrap,
  through stages/common/inference.py) resamples the seeds and refits. ``regret_T``: mean cumulative regret at T. ``ratio``: old / new regret at T, the seeds
  resampled in pairs (both methods met the same items and choice noise).
* ``online.new_slope_max`` / ``old_slope_min`` / ``ratio_min``: the worst radius, what the claims
  read ("at every radius").
* ``offline``: mean suboptimality R(S*) - R(S_hat) of each rule at each n (interval: scipy's BCa
  bootstrap over the instance x replication data sets, through stages/common/inference.py);
  ``smallest_n``: the same pooled over the radii and the paired differences new - plug-in and
  new - old with intervals.
"""
from __future__ import annotations

from stages.common.fits import loglog_slope
from stages.common.runtime.stage import stage

from .params import MnlAssortmentParams
from .paths import CSV_OFFLINE, CSV_REGRET, METRICS, PLOT_OFFLINE, PLOT_REGRET, PREPARE_METRICS, RESULTS, TRAIN_METRICS

RNG_BOOT = 21
METHOD_NAMES = {"new": "MLE-Hessian width (new)", "old": "Oh & Iyengar width 1/(2 kappa) (old)"}
RULE_NAMES = {"plugin": "plug-in MLE", "new": "pessimism, new region", "old": "pessimism, old region (PASTA-style)"}


def radius_key(B: float) -> str:
    """'B1', 'B0p25': a metrics key without dots (claims look metrics up by dotted paths)."""
    return "B" + f"{B:g}".replace(".", "p")


def checkpoints(T: int, fit_from: float, n: int):
    """About n distinct integer rounds, log-spaced over [fit_from T, T], T included."""
    import numpy as np

    return np.unique(np.round(np.geomspace(max(1.0, fit_from * T), T, n)).astype(int))


def boot_slopes(t, curves, idx):
    """Slopes of the mean curve for each bootstrap resample: curves (seeds, len(t)), idx (B, seeds)."""
    import numpy as np

    from stages.common.fits import loglog_slopes

    means = curves[idx].mean(1)                                          # (B, len(t))
    ok = (means > 0).all(1)
    return np.where(ok, loglog_slopes(t, means), np.nan)


def over_seeds(fn):
    """A statistic of resampled seed indices for :func:`stages.common.inference.bootstrap_interval`
    (scipy's bootstrap resamples ``arange(seeds)``; ``fn`` maps index rows (rows, k) to (rows,)):
    resampling indices lets one statistic read several arrays of the same seeds, paired."""
    import numpy as np

    def stat(i, axis=-1):
        i = np.moveaxis(np.asarray(i), axis, -1).astype(int)
        return np.asarray(fn(i.reshape(-1, i.shape[-1]))).reshape(i.shape[:-1])

    return stat


def seed_interval(fn, seeds: int, ep, seed: int) -> list[float]:
    """scipy's BCa interval (level ``ep.ci_level``, ``ep.n_boot`` resamples) of ``fn`` over the seeds."""
    import numpy as np

    from stages.common.inference import bootstrap_interval

    return list(bootstrap_interval(np.arange(seeds), over_seeds(fn), confidence=ep.ci_level,
                                   n_resamples=ep.n_boot, seed=seed))


def online_metrics(res: dict, ep, rng) -> dict:
    """Slopes, final regrets and their ratio per radius, with scipy's BCa intervals over the seeds
    (every interval resamples the seeds; the ratio's resamples old and new together, paired)."""
    import numpy as np

    cum = np.cumsum(res["regret"], axis=1)                              # (runs, T)
    T = cum.shape[1]
    t = checkpoints(T, ep.fit_from, ep.fit_points)
    out = {"checkpoints": t.tolist(), "T": int(T)}
    radii = res["radii"]
    seeds = int(res["run_seed"].max()) + 1
    for b, B in enumerate(radii):
        entry = {}
        for m, name in enumerate(("new", "old")):
            sel = (res["run_method"] == m) & (res["run_radius"] == b)
            order = np.argsort(res["run_seed"][sel])
            curves = cum[sel][order][:, t - 1]                           # (seeds, len(t))
            slope, icpt = loglog_slope(t, curves.mean(0))
            final = cum[sel][order][:, -1]
            lo, hi = seed_interval(lambda i, c=curves: boot_slopes(t, c, i), seeds, ep, int(rng.integers(2**32)))
            band = [seed_interval(lambda i, c=curves[:, j]: c[i].mean(1), seeds, ep, int(rng.integers(2**32)))
                    for j in range(len(t))]
            entry[name] = {"slope": slope, "intercept": icpt, "ci_low": lo, "ci_high": hi,
                           "regret_T": float(final.mean()),
                           "regret_T_ci": seed_interval(lambda i, f=final: f[i].mean(1), seeds, ep,
                                                        int(rng.integers(2**32))),
                           "regret_T_per_seed": final.tolist(),
                           "mean_curve": curves.mean(0).tolist(),
                           "curve_band": [[lo_ for lo_, _ in band], [hi_ for _, hi_ in band]]}
            entry[f"_final_{name}"] = final
        fn, fo = entry.pop("_final_new"), entry.pop("_final_old")
        entry["ratio"] = float(fo.mean() / fn.mean())
        entry["ratio_ci"] = seed_interval(lambda i: fo[i].mean(1) / fn[i].mean(1), seeds, ep, int(rng.integers(2**32)))
        entry["kappa_inverse"] = float(1.0 / res["kappa"][res["run_radius"] == b][0])
        entry["coverage_new"] = float(res["in_new"][(res["run_method"] == 0) & (res["run_radius"] == b)].mean())
        out[radius_key(B)] = entry
    keys = [radius_key(B) for B in radii]
    out["radii"] = [float(B) for B in radii]
    out["new_slope_max"] = max(out[k]["new"]["slope"] for k in keys)
    out["new_slope_max_ci_high"] = max(out[k]["new"]["ci_high"] for k in keys)
    out["old_slope_min"] = min(out[k]["old"]["slope"] for k in keys)
    out["old_slope_min_ci_low"] = min(out[k]["old"]["ci_low"] for k in keys)
    out["ratio_min"] = min(out[k]["ratio"] for k in keys)
    out["ratio_min_ci_low"] = min(out[k]["ratio_ci"][0] for k in keys)
    out["new_regret_T"] = {k: out[k]["new"]["regret_T"] for k in keys}
    out["old_regret_T"] = {k: out[k]["old"]["regret_T"] for k in keys}
    out["new_slope"] = {k: out[k]["new"]["slope"] for k in keys}
    out["old_slope"] = {k: out[k]["old"]["slope"] for k in keys}
    out["ratio_by_radius"] = {k: out[k]["ratio"] for k in keys}
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


def plot_regret(m: dict, path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    radii = m["radii"]
    t = np.array(m["checkpoints"], dtype=float)
    fig, axes = new_figure(1, len(radii), figsize=(5.0 * len(radii), 4.4), squeeze=False)
    for ax, B in zip(axes[0], radii):
        e = m[radius_key(B)]
        for name, color in (("new", "C0"), ("old", "C3")):
            s = e[name]
            band = np.array(s["curve_band"])
            ax.fill_between(t, band[0], band[1], color=color, alpha=0.2)
            ax.plot(t, s["mean_curve"], "o", ms=3, color=color,
                    label=f"{METHOD_NAMES[name]}: slope {s['slope']:.2f} [{s['ci_low']:.2f}, {s['ci_high']:.2f}]")
            ax.plot(t, np.exp(s["intercept"]) * t ** s["slope"], "-", color=color, lw=1)
        ax.plot(t, e["new"]["mean_curve"][-1] * np.sqrt(t / t[-1]), ":", color="grey", label=r"$\propto\sqrt{t}$")
        ax.set(xscale="log", yscale="log", xlabel="round t",
               title=f"B = {B:g} (1/kappa = {e['kappa_inverse']:.3g}); old/new at T: {e['ratio']:.1f}")
        ax.legend(fontsize=7, loc="upper left")
    axes[0][0].set_ylabel("cumulative expected-revenue regret (mean over seeds, 95% band)")
    save_png(fig, path)


def plot_offline(m: dict, path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    ns = np.array(m["n"], dtype=float)
    radii = [k for k in m if k.startswith("B")]
    fig, axes = new_figure(1, len(radii), figsize=(5.0 * len(radii), 4.2), squeeze=False)
    for ax, key in zip(axes[0], radii):
        for rule, color in (("plugin", "C2"), ("new", "C0"), ("old", "C3")):
            e = m[key][rule]
            ci = np.array(e["ci"])
            mean = np.array(e["mean"])
            ax.errorbar(ns, mean, yerr=[mean - ci[:, 0], ci[:, 1] - mean], fmt="o-", ms=3, capsize=2,
                        color=color, label=RULE_NAMES[rule])
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=1e-4)        # suboptimality is >= 0 and can be exactly 0
        ax.set_ylim(bottom=0)
        ax.set(xlabel="logged rounds n", title=f"offline, B = {key[1:].replace('p', '.')}")
        ax.legend(fontsize=7, loc="lower left")
    axes[0][0].set_ylabel("mean suboptimality R(S*) - R(S_hat)")
    save_png(fig, path)


def main() -> None:
    with stage("mnl_assortment", "evaluate", MnlAssortmentParams) as ctx:
        import json

        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import write_csv

        with np.load(ctx.path(RESULTS)) as z:
            res = {k: z[k] for k in z.files}
        ep = ctx.params.evaluate
        rng = np.random.default_rng([ctx.seed, RNG_BOOT])
        m = {"online": online_metrics(res, ep, rng), "offline": offline_metrics(res, ep, rng)}
        prep = json.loads(ctx.path(PREPARE_METRICS).read_text())
        train = json.loads(ctx.path(TRAIN_METRICS).read_text())
        m["highs"] = prep["highs"]
        m["mle"] = train["mle"]
        m["online"]["coverage_new"] = train["online"]["coverage_new"]
        m["online"]["coverage_old"] = train["online"]["coverage_old"]
        m["online"]["width_ratio_old_over_new_median"] = train["online"]["width_ratio_old_over_new_median"]
        m["offline"]["optimal_logged_at_smallest_n_mean"] = prep["offline"]["optimal_logged_at_smallest_n_mean"]
        write_json(ctx.path(METRICS), m)
        on = m["online"]
        rows = []
        for j, t in enumerate(on["checkpoints"]):
            row = {"t": int(t)}
            for B in on["radii"]:
                k = radius_key(B)
                for name in ("new", "old"):
                    s = on[k][name]
                    row[f"{name}_{k}"] = s["mean_curve"][j]
                    row[f"{name}_{k}_fit"] = float(np.exp(s["intercept"]) * t ** s["slope"])
            rows.append(row)
        write_csv(ctx.path(CSV_REGRET), rows)
        off = m["offline"]
        write_csv(ctx.path(CSV_OFFLINE), [
            {"n": n, **{f"{rule}_{k}": off[k][rule]["mean"][j] for k in off if k.startswith("B")
                        for rule in ("plugin", "new", "old")}}
            for j, n in enumerate(off["n"])])
        plot_regret(on, ctx.path(PLOT_REGRET))
        plot_offline(off, ctx.path(PLOT_OFFLINE))
        for B in on["radii"]:
            e = on[radius_key(B)]
            print(f"  B={B:g}: new regret {e['new']['regret_T']:.1f} slope {e['new']['slope']:.2f} "
                  f"[{e['new']['ci_low']:.2f}, {e['new']['ci_high']:.2f}]; old {e['old']['regret_T']:.1f} slope "
                  f"{e['old']['slope']:.2f}; ratio {e['ratio']:.1f} [{e['ratio_ci'][0]:.1f}, {e['ratio_ci'][1]:.1f}]",
                  flush=True)
        s = off["smallest_n"]
        print(f"  offline n={s['n']}: plug-in {s['plugin']:.4f}, new pessimism {s['new']:.4f}, old {s['old']:.4f}",
              flush=True)


if __name__ == "__main__":
    main()
