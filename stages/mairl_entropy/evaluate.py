"""mairl_entropy evaluate: the claims' figures, the log-log fits and the plots.

Reads ``data/mairl_entropy/results.json`` and ``sweep.npz``; writes
``reports/mairl_entropy/metrics.json`` (what claims.yaml reads), ``recovery.png`` (errors vs n,
log-log, with the fits), ``ambiguity.png`` (the QRE correspondence of the two matrix games) and
their numbers as CSV for ``dvc plots``.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import MairlParams
from .paths import CSV_AMBIGUITY, CSV_RECOVERY, METRICS, PLOT_AMBIGUITY, PLOT_RECOVERY, RESULTS, SWEEP

ERRORS = {"reward_error": ("worst-case reward error", -0.5),
          "value_gap": ("value gap (true reward)", -0.5),
          "nash_gap": ("regularised Nash gap (true reward)", -1.0)}


def tau_key(tau: float) -> str:
    return f"tau_{tau:g}".replace(".", "p")


def summarise(res: dict) -> dict:
    """Every non-sweep figure of metrics.json, from results.json."""
    u = res["uniqueness"]["games"]
    amb = res["ambiguity"]
    cases = {k: v for k, v in amb.items() if k not in ("correspondence", "canonical_reward_difference")}
    zs = [v for k, v in cases.items() if k.endswith("zero_sum")]
    ii = [v for k, v in cases.items() if k.endswith("identical_interest")]
    ver = res["verify"]
    verify = {"pennies_max_dev": max(ver["pennies_max_dev"]), "root_2x2_max_diff": ver["root_2x2_max_diff"],
              "mmd_zero_sum_max_diff": ver["mmd_zero_sum_max_diff"], "mmd_max_gap": ver["mmd_max_gap"],
              "markov_root_max_diff": max(g["scipy_root_max_diff"] for g in u)}
    verify["max_library_diff"] = max(verify["root_2x2_max_diff"], verify["mmd_zero_sum_max_diff"],
                                     verify["markov_root_max_diff"], verify["pennies_max_dev"])
    return {
        "uniqueness": {
            "tau": res["tau"], "n_games": len(u), "n_starts": res["uniqueness"]["n_starts"],
            "max_pairwise_distance": max(g["max_pairwise_distance"] for g in u),
            "min_converged_fraction": min(g["converged_fraction"] for g in u),
            "max_iterations": max(g["iterations"] for g in u),
            "max_vi_residual": max(g["vi_residual"] for g in u),
            "max_regularised_nash_gap": max(g["regularised_nash_gap"] for g in u),
            "min_qre_prob": min(g["min_prob"] for g in u),
        },
        "tau_sweep": {tau_key(r["tau"]): {"games_with_several": r["games_with_several"],
                                          "games_not_all_converged": r["games_not_all_converged"]}
                      for r in res["tau_sweep"]},
        "ambiguity": {
            "max_nash_gap": max(v["nash_gap_at_uniform"] for v in cases.values()),
            "min_nash_gap_at_pure": min(v["nash_gap_at_pure"] for v in cases.values()),
            "zero_sum_from_zero_sum": max(v["from_zero_sum"] for v in zs),
            "identical_from_identical": max(v["from_identical_interest"] for v in ii),
            "nature_gap": min(min(v["from_identical_interest"] for v in zs), min(v["from_zero_sum"] for v in ii)),
            "canonical_reward_difference": amb["canonical_reward_difference"],
            "shared_qre_residual": max(r["uniform_residual"] for v in cases.values() for r in v["by_tau"]),
            "zero_sum_max_distinct_qre": max(r["distinct_qre_found"] for v in zs for r in v["by_tau"]),
            "identical_max_distinct_qre": max(r["distinct_qre_found"] for v in ii for r in v["by_tau"]),
            "markov_identical_distinct_by_tau": [r["distinct_qre_found"]
                                                 for r in amb["markov.identical_interest"]["by_tau"]],
            "markov_identical_converged_by_tau": [r["converged"]
                                                  for r in amb["markov.identical_interest"]["by_tau"]],
            "tau_grid": [r["tau"] for r in amb["markov.identical_interest"]["by_tau"]],
        },
        "verify": verify,
    }


def main() -> None:
    with stage("mairl_entropy", "evaluate", MairlParams) as ctx:
        import json

        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        from .stats import curve, loglog_fit

        ep = ctx.params.evaluate
        res = json.loads(ctx.path(RESULTS).read_text())
        with np.load(ctx.path(SWEEP)) as z:
            sweep = {k: z[k] for k in z.files}
        m = summarise(res)
        n = sweep["n"]
        keep = n >= ep.fit_n_min
        rng = np.random.default_rng(np.random.SeedSequence([ctx.seed, 6]))
        rec = {"sampling": res["recovery"]["sampling"], "repetitions": res["recovery"]["repetitions"],
               "n_min": int(n[keep].min()), "n_max": int(n[keep].max()), "n_points": int(keep.sum()),
               "max_rationalised": res["recovery"]["max_rationalised"],
               "all_converged": res["recovery"]["all_converged"]}
        for key in ERRORS:
            rec[key] = loglog_fit(n[keep], sweep[key][:, keep], ep.n_boot, ep.ci_level, rng)
        m["recovery"] = rec
        write_json(ctx.path(METRICS), m)

        fig, axes = new_figure(1, 3, figsize=(15, 4.4))
        rows = [{"n": int(v)} for v in n]
        for ax, (key, (label, ref)) in zip(axes, ERRORS.items()):
            err, fit = sweep[key], rec[key]
            for g in range(err.shape[0]):
                ax.plot(n, err[g].mean(axis=-1), color="0.75", lw=0.8, label="each game" if g == 0 else None)
            y = np.exp(curve(err))
            ax.plot(n, y, "o", color="C0", label="geometric mean over games")
            xs = n[keep].astype(float)
            ax.plot(xs, np.exp(fit["intercept"]) * xs ** fit["slope"], "-", color="C3",
                    label=f"fit slope {fit['slope']:.3f} [{fit['ci_low']:.3f}, {fit['ci_high']:.3f}]")
            ax.plot(xs, y[keep][0] * (xs / xs[0]) ** ref, "--", color="0.4", label=f"slope {ref:g}")
            ax.set(xscale="log", yscale="log", xlabel="demonstrations n", title=label)
            ax.legend(fontsize=8)
            for r, v in zip(rows, y):
                r[key] = float(v)
        axes[0].set_ylabel(f"mean over {rec['repetitions']} repetitions")
        fig.suptitle(f"Reward recovery from QRE demonstrations (tau = {res['tau']:g}, "
                     f"{rec['sampling']} sampling, {len(sweep['reward_error'])} games)")
        save_png(fig, ctx.path(PLOT_RECOVERY))
        write_csv(ctx.path(CSV_RECOVERY), rows)

        fig, ax = new_figure(figsize=(7, 4.4))
        amb_rows = []
        for (name, pts), color, marker in zip(res["ambiguity"]["correspondence"].items(), ("C0", "C3"), ("o", "x")):
            pts = np.array(pts)
            ax.plot(pts[:, 0], pts[:, 1], marker, color=color, ms=4, label=f"{name.replace('_', ' ')}: QREs found")
            amb_rows += [{"game": name, "tau": float(t), "p1": float(a), "p2": float(b)} for t, a, b in pts]
        ax.axhline(0.5, color="0.3", lw=1, ls="--",
                   label="uniform play: Nash of both, and a QRE of both at every tau\n(residual 0; unstable "
                         "for the iteration in the coordination game at tau < 1)")
        ax.set(xscale="log", xlabel="tau", ylabel="P(player 1 plays action 1)",
               title="Matching pennies (zero-sum) vs the same matrix as a coordination game")
        ticks = [t for t in (0.1, 0.2, 0.5, 1, 2, 5, 10) if min(pts[:, 0]) * 0.9 <= t <= max(pts[:, 0]) * 1.1]
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1)
        save_png(fig, ctx.path(PLOT_AMBIGUITY))
        write_csv(ctx.path(CSV_AMBIGUITY), amb_rows)

        f = rec["reward_error"]
        print(f"  reward-error slope {f['slope']:.3f} [{f['ci_low']:.3f}, {f['ci_high']:.3f}]; value-gap "
              f"{rec['value_gap']['slope']:.3f}; Nash-gap {rec['nash_gap']['slope']:.3f}; QRE max distance "
              f"{m['uniqueness']['max_pairwise_distance']:.2e}; ambiguity Nash gap "
              f"{m['ambiguity']['max_nash_gap']:.1e}", flush=True)


if __name__ == "__main__":
    main()
