"""efg_altpg evaluate: the claims' figures, the iterations-to-epsilon fit, and the plots.

Reads data/efg_altpg/runs.json (train) and reports/efg_altpg/prepare.json; writes
reports/efg_altpg/metrics.json (what claims.yaml reads: every verdict seed's figures under
``per_seed``, their means beside them, and the figures that do not depend on the seed, CFR+
and the sequence-form checks of the OpenSpiel games; stages.common.seeds.per_seed_metrics),
curves.png (last-iterate exploitability vs rounds per game, regularized / unregularized / CFR+,
mean over the seeds and inits), rate.png (the log-log fit of rounds-to-epsilon vs 1/epsilon,
every seed's starts) and their plot data (CSV).
"""
from __future__ import annotations

import math

from stages.common.runtime.stage import fail, stage

from .games import VARIANTS
from .params import EfgAltPGParams
from .paths import CSV_KUHN, CSV_LEDUC, CSV_RATE, METRICS, PLOT_CURVES, PLOT_RATE, PREPARE_REPORT, RUNS

COLOURS = {"direct": "tab:blue", "softmax": "tab:orange", "npg": "tab:green"}


def game_metrics(g: dict) -> dict:
    """Per variant: the kept steps, the regularized and unregularized last iterates (OpenSpiel,
    worst init), the late means of the last iterate and of the average iterate (averaged over
    inits) and unregularized / regularized for both; then worst over variants."""
    import numpy as np

    out: dict = {"tau": g["tau"], "iterations": g["iterations"]}
    for v in VARIANTS:
        reg, unreg = g[v]["reg"], g[v]["unreg"]
        reg_late = float(np.mean([r["late_mean"] for r in reg["runs"]]))
        unreg_late = float(np.mean([r["late_mean"] for r in unreg["runs"]]))
        reg_avg = float(np.mean([r["avg_late_mean"] for r in reg["runs"]]))
        unreg_avg = float(np.mean([r["avg_late_mean"] for r in unreg["runs"]]))
        out[v] = {"reg_step": reg["step"], "unreg_step": unreg["step"],
                  "reg_last": max(r["last_openspiel"] for r in reg["runs"]),
                  "unreg_last": max(r["last_openspiel"] for r in unreg["runs"]),
                  "reg_late_mean": reg_late, "unreg_late_mean": unreg_late,
                  "ratio": unreg_late / reg_late if reg_late > 0 else math.inf,
                  "reg_avg_late_mean": reg_avg, "unreg_avg_late_mean": unreg_avg,
                  "avg_ratio": unreg_avg / reg_avg if reg_avg > 0 else math.inf}
    out["reg_last_max"] = max(out[v]["reg_last"] for v in VARIANTS)
    out["unreg_last_max"] = max(out[v]["unreg_last"] for v in VARIANTS)
    out["ratio_min"] = min(out[v]["ratio"] for v in VARIANTS)
    out["avg_ratio_min"] = min(out[v]["avg_ratio"] for v in VARIANTS)
    out["max_last_abs_diff"] = max(max(g[v][k]["max_last_abs_diff"] for k in ("reg", "unreg")) for v in VARIANTS)
    return out


def seed_metrics(run: dict, ci_level: float) -> dict:
    """One verdict seed's figures (what the claims read, per seed) from its runs."""
    import numpy as np

    games = run["games"]
    m: dict = {name: game_metrics(games[name]) for name in ("kuhn_poker", "leduc_poker")}
    rnd = {k: game_metrics(g) for k, g in games.items() if k.startswith("random_")}
    if rnd:
        m["random"] = {"games": len(rnd), "per_game": rnd,
                       "reg_last_max": max(r["reg_last_max"] for r in rnd.values()),
                       "unreg_last_max": max(r["unreg_last_max"] for r in rnd.values()),
                       "ratio_min": min(r["ratio_min"] for r in rnd.values()),
                       "ratio_median": float(np.median([r["ratio_min"] for r in rnd.values()])),
                       # share of (game, variant) pairs where tau = 0 is >= 2x worse late in the run
                       "ratio_ge2_share": float(np.mean([r[v]["ratio"] >= 2 for r in rnd.values()
                                                        for v in VARIANTS]))}
    sp = run["sampled"]
    m["sampled"] = {"game": sp["game"], "tau": sp["tau"], "episodes": sp["episodes"],
                    "iterations": sp["iterations"],
                    **{v: {"step": sp[v]["step"], "last": sp[v]["last_openspiel"],
                           "late_mean": sp[v]["late_mean"],
                           "exact_control_last": sp[v]["exact_control"]["last_openspiel"]}
                       for v in VARIANTS}}
    m["sampled"]["last_max"] = max(sp[v]["last_openspiel"] for v in VARIANTS)
    m["sampled"]["exact_control_last_max"] = max(sp[v]["exact_control"]["last_openspiel"] for v in VARIANTS)
    m["rate"] = rate_metrics(run["rate"], ci_level)
    diffs = [m[n]["max_last_abs_diff"] for n in ("kuhn_poker", "leduc_poker")]
    diffs += [r["max_last_abs_diff"] for r in rnd.values()]
    diffs += [sp[v]["last_abs_diff"] for v in VARIANTS]
    m["exploitability_check_max_abs_diff"] = max(diffs)
    return m


def slope(x, y) -> tuple[float, float]:
    """OLS slope and R^2 of y on x."""
    import numpy as np

    x, y = np.asarray(x, float), np.asarray(y, float)
    xc, yc = x - x.mean(), y - y.mean()
    b = float((xc * yc).sum() / (xc * xc).sum())
    ss = float((yc * yc).sum())
    r2 = 1.0 - float(((yc - b * xc) ** 2).sum()) / ss if ss > 0 else 1.0
    return b, r2


def rate_metrics(rate: dict, ci_level: float) -> dict:
    """Log-log fit of rounds-to-epsilon vs 1/epsilon, per variant.

    ``rate["variants"][v]["iterations"]`` is a table [start][epsilon] (None: not reached).
    ``slope``: the fit through the geometric mean over the starts at each epsilon (``r2`` its
    R^2); ``slope_ci``: the mean of the per-start slopes with a t interval over the starts;
    ``curvature_ratio``: the slope over the smaller-epsilon half of the grid divided by the
    slope over the larger-epsilon half. A power law (polynomial) gives about 1; an exponential
    law exp(c / epsilon) would give about the ratio of the halves' epsilons (>= 2 here)."""
    import numpy as np

    from stages.common.stats import t_interval

    eps = np.array(rate["epsilons"], float)
    lx = np.log(1.0 / eps)
    out: dict = {"epsilons": rate["epsilons"], "tau_over_epsilon": rate["tau_over_epsilon"]}
    for v, d in rate["variants"].items():
        table = d["iterations"]
        ok = [row for row in table if all(t is not None for t in row)]
        misses = sum(t is None for row in table for t in row)
        res = {"step": d["step"], "starts": len(table), "starts_complete": len(ok), "misses": misses}
        if len(ok) >= 2:
            ly = np.log(np.maximum(np.array(ok, float), 1.0))      # a hit at round 0 counts as 1
            per_start = np.array([slope(lx, row)[0] for row in ly])
            mean_ly = ly.mean(axis=0)
            b, r2 = slope(lx, mean_ly)
            half = len(eps) // 2
            b_large = slope(lx[:half + 1], mean_ly[:half + 1])[0]
            b_small = slope(lx[half:], mean_ly[half:])[0]
            ci = t_interval(per_start, ci_level)
            res.update({"slope": b, "r2": r2, "slope_start_mean": ci["mean"],
                        "slope_ci_low": ci["low"], "slope_ci_high": ci["high"],
                        "slope_per_start": per_start.tolist(),
                        "slope_large_eps": b_large, "slope_small_eps": b_small,
                        "curvature_ratio": b_small / b_large if b_large > 0 else math.inf,
                        "geomean_iterations": np.exp(mean_ly).tolist()})
        out[v] = res
    fitted = [out[v] for v in rate["variants"] if "slope" in out[v]]
    if fitted:
        out["curvature_ratio_max"] = max(r["curvature_ratio"] for r in fitted)
        out["slope_min"] = min(r["slope"] for r in fitted)
        out["slope_max"] = max(r["slope"] for r in fitted)
    out["misses"] = sum(out[v]["misses"] for v in rate["variants"])
    return out


def plot_game(ax, gs: list[dict], cfr: dict | None, title: str) -> dict:
    """Regularized (solid) and unregularized (dashed) last iterates per variant, the mean over
    the seeds ``gs`` (one game dict each) and their inits, CFR+ average (black) and current
    (grey); returns the plotted series for the CSV."""
    series: dict = {}
    for v in VARIANTS:
        for kind, style in (("reg", "-"), ("unreg", "--")):
            it, ex = mean_over([g[v][kind]["runs"] for g in gs])
            keep = it >= 1
            steps = sorted({g[v][kind]["step"] for g in gs})
            eta = ",".join(f"{e:g}" for e in steps)
            label = (f"{v} τ={gs[0][v][kind]['tau']:g} (η={eta})" if kind == "reg" else f"{v} τ=0 (η={eta})")
            ax.loglog(it[keep], ex[keep], style, color=COLOURS[v], lw=1.3, label=label)
            series[f"{v}_{kind}"] = dict(zip(it.tolist(), ex.tolist()))
    if cfr:
        ax.loglog(cfr["iters"], cfr["average"], "-", color="black", lw=1.6, label="CFR+ average (OpenSpiel)")
        ax.loglog(cfr["iters"], cfr["current"], ":", color="grey", lw=1.4, label="CFR+ current (OpenSpiel)")
        series["cfr_plus_average"] = dict(zip(cfr["iters"], cfr["average"]))
        series["cfr_plus_current"] = dict(zip(cfr["iters"], cfr["current"]))
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("round (both players stepped once) / CFR+ iteration")
    ax.set_ylabel("exploitability (NashConv / 2)")
    ax.grid(True, which="both", alpha=0.3)
    return series


def series_rows(series: dict) -> list[dict]:
    its = sorted({i for s in series.values() for i in s})
    return [{"iteration": i, **{k: s.get(i, "") for k, s in series.items()}} for i in its]


def pooled_rate(runs: dict) -> dict:
    """Every seed's starts as one table per variant (for the plot and the pooled fit)."""
    seeds = list(runs["per_seed"])
    first = runs["per_seed"][seeds[0]]["rate"]
    return {**first, "variants": {v: {"step": d["step"],
                                      "iterations": [row for s in seeds
                                                     for row in runs["per_seed"][s]["rate"]["variants"][v]["iterations"]]}
                                  for v, d in first["variants"].items()}}


def mean_over(seeds_runs: list[list[dict]], key: str = "expl"):
    """Iterations and the mean curve over every seed's kept runs (they share the grid)."""
    import numpy as np

    runs = [r for rs in seeds_runs for r in rs]
    return np.array(runs[0]["iters"]), np.mean([r[key] for r in runs], axis=0)


def main() -> None:
    with stage("efg_altpg", "evaluate", EfgAltPGParams) as ctx:
        import json

        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics

        runs = json.loads(ctx.path(RUNS).read_text())
        prep = json.loads(ctx.path(PREPARE_REPORT).read_text())
        seeds = [int(s) for s in runs["per_seed"]]
        if seeds != list(ctx.seeds):
            fail(f"{RUNS} holds seeds {seeds}, the profile's verdict seeds are {ctx.seeds}; "
                 "run `dvc repro stages/efg_altpg/dvc.yaml:efg_altpg-train`")
        ci = ctx.params.evaluate.ci_level
        per_seed = {s: seed_metrics(runs["per_seed"][str(s)], ci) for s in seeds}
        cfr = runs["cfr_plus"]
        shared = {
            "prepare": {"max_abs_diff": prep["max_abs_diff"],
                        **{f"uniform_exploitability_{k}": v["uniform_exploitability"] for k, v in prep["games"].items()},
                        **{f"uniform_exploitability_openspiel_{k}": v["uniform_exploitability_openspiel"]
                           for k, v in prep["games"].items()}},
            "cfr_plus": {k: {"iterations": c["iters"][-1], "average_final": c["average"][-1],
                             "current_final": c["current"][-1]} for k, c in cfr["shared"].items()},
            "rate_pooled": rate_metrics(pooled_rate(runs), ci),
            "exploitability_check_max_abs_diff_all": max(m["exploitability_check_max_abs_diff"]
                                                         for m in per_seed.values()),
        }
        m = per_seed_metrics(per_seed, **shared)
        write_json(ctx.path(METRICS), m)

        # curves: Kuhn, Leduc (mean over seeds and inits), Kuhn sampled, the first seed's first random game
        first = runs["per_seed"][str(seeds[0])]
        fig, axes = new_figure(2, 2, figsize=(13, 9.5))
        axes = axes.ravel()
        csv_series = {}
        for ax, name in zip(axes[:2], ("kuhn_poker", "leduc_poker")):
            gs = [runs["per_seed"][str(s)]["games"][name] for s in seeds]
            csv_series[name] = plot_game(ax, gs, cfr["shared"].get(name),
                                         f"{name}: last iterate, exact gradients (mean of {len(seeds)} seeds x "
                                         f"{len(gs[0]['npg']['reg']['runs'])} inits)")
        ax = axes[2]
        sps = [runs["per_seed"][str(s)]["sampled"] for s in seeds]
        sp0 = sps[0]
        for v in VARIANTS:
            it, ex = mean_over([[sp[v]] for sp in sps])
            ax.loglog(it[it >= 1], ex[it >= 1], "-", color=COLOURS[v], lw=1.2,
                      label=f"{v} τ={sp0['tau']:g}, {sp0['episodes']} episodes / step")
            it, ex = mean_over([[sp[v]["exact_control"]] for sp in sps])
            ax.loglog(it[it >= 1], ex[it >= 1], ":", color=COLOURS[v], lw=1.2,
                      label=f"{v}: exact gradients, same start and step")
        ax.set_title(f"{sp0['game']}: sampled trajectories (stochastic gradients), mean of {len(seeds)} seeds",
                     fontsize=10)
        ax.set_xlabel("round")
        ax.set_ylabel("exploitability (NashConv / 2)")
        ax.grid(True, which="both", alpha=0.3)
        first_rnd = next((n for n in first["games"] if n.startswith("random_")), None)
        if first_rnd:
            plot_game(axes[3], [first["games"][first_rnd]], cfr["per_seed"][str(seeds[0])].get(first_rnd),
                      f"{first_rnd} of seed {seeds[0]} (random poker-like EFG): exact gradients")
        else:
            axes[3].set_visible(False)
        for ax in axes:
            if ax.lines:
                ax.legend(fontsize=6.5)
            else:
                ax.set_visible(False)
        save_png(fig, ctx.path(PLOT_CURVES))
        write_csv(ctx.path(CSV_KUHN), series_rows(csv_series["kuhn_poker"]))
        write_csv(ctx.path(CSV_LEDUC), series_rows(csv_series["leduc_poker"]))
        for name in csv_series:
            for v in VARIANTS:
                for kind in ("reg", "unreg"):
                    it, ex = mean_over([runs["per_seed"][str(s)]["games"][name][v][kind]["runs"] for s in seeds])
                    ctx.run.log_curve(f"{name}.{v}.{kind}.exploitability", ex, it)

        # iterations to epsilon, log-log: every seed's starts, the pooled fit
        rm, rate = shared["rate_pooled"], pooled_rate(runs)
        inv = 1.0 / np.array(rate["epsilons"])
        fig, ax = new_figure(figsize=(7, 4.8))
        rows = [{"log10_inv_epsilon": float(math.log10(x))} for x in inv]
        for v, d in rate["variants"].items():
            for row in d["iterations"]:
                pts = [(x, max(t, 1)) for x, t in zip(inv, row) if t is not None]
                if pts:
                    ax.loglog(*zip(*pts), ".", color=COLOURS[v], alpha=0.25, ms=4)
            r = rm[v]
            if "slope" not in r:
                continue
            gm = np.array(r["geomean_iterations"])
            ax.loglog(inv, gm, "o", color=COLOURS[v], ms=6)
            lx = np.log(inv)
            b = r["slope"]
            a = float(np.mean(np.log(gm)) - b * lx.mean())
            seed_slopes = [per_seed[s]["rate"][v]["slope"] for s in seeds if "slope" in per_seed[s]["rate"][v]]
            ax.loglog(inv, np.exp(a + b * lx), "-", color=COLOURS[v], lw=1.4,
                      label=f"{v}: pooled slope {b:.2f}, R² {r['r2']:.3f}; per seed "
                            f"{min(seed_slopes):.2f}–{max(seed_slopes):.2f}")
            for i, y in enumerate(gm):
                rows[i][f"log10_iterations_{v}"] = float(math.log10(y))
        ax.set_xlabel("1 / ε")
        ax.set_ylabel("rounds until last-iterate exploitability ≤ ε")
        ax.set_title(f"{rate['game']}: τ = {rate['tau_over_epsilon']:g} ε, fixed steps; dots = starts of "
                     f"{len(seeds)} seeds, circles = geometric mean", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        save_png(fig, ctx.path(PLOT_RATE))
        cols = sorted({k for r in rows for k in r})
        write_csv(ctx.path(CSV_RATE), [{k: r.get(k, "") for k in cols} for r in rows])

        for s in seeds:
            k, le, ps = per_seed[s]["kuhn_poker"], per_seed[s]["leduc_poker"], per_seed[s]
            print(f"  seed {s}: Kuhn last iterate (worst) regularized {k['reg_last_max']:.4f}, unregularized "
                  f"{k['unreg_last_max']:.4f}; late ratio {k['ratio_min']:.2f} (average iterates "
                  f"{k['avg_ratio_min']:.2f}); Leduc ratio {le['ratio_min']:.2f} ({le['avg_ratio_min']:.2f}); "
                  f"rate curvature {ps['rate'].get('curvature_ratio_max', float('nan')):.2f}; sampled "
                  f"{ps['sampled']['last_max']:.4f}; random {ps.get('random', {}).get('reg_last_max', float('nan')):.4f}",
                  flush=True)


if __name__ == "__main__":
    main()
