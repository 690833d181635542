"""mairl_entropy evaluate: the claims' figures per verdict seed, the log-log fits and the plots.

Reads ``data/mairl_entropy/results.json`` and ``sweep.npz``; writes
``reports/mairl_entropy/metrics.json`` (what claims.yaml reads: ``per_seed``, each seed's figures,
beside their mean over the seeds, and the ambiguity example's exact figures, shared),
``transfer.png`` (per seed and game, how far the learner's QRE of the recovered reward ends from
the expert's policy, at tau and at tau_control), ``recovery.png`` (errors vs n, log-log, per seed
with the fits), ``ambiguity.png`` (the QRE correspondence of the two matrix games) and their
numbers as CSV for ``dvc plots``.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import MairlParams
from .paths import (CSV_AMBIGUITY, CSV_RECOVERY, CSV_TRANSFER, METRICS, PLOT_AMBIGUITY, PLOT_RECOVERY,
                    PLOT_TRANSFER, RESULTS, SWEEP)

ERRORS = {"reward_error": ("worst-case reward error", -0.5),
          "value_gap": ("value gap (true reward)", -0.5),
          "nash_gap": ("regularised Nash gap (true reward)", -1.0)}


def tau_key(tau: float) -> str:
    return f"tau_{tau:g}".replace(".", "p")


def uniqueness_summary(u: dict) -> dict:
    """One arm's uniqueness figures over the seed's games (results.json's ``uniqueness``)."""
    g = u["games"]
    return {"tau": u["tau"], "n_games": len(g), "n_starts": u["n_starts"],
            "max_pairwise_distance": max(x["max_pairwise_distance"] for x in g),
            "min_converged_fraction": min(x["converged_fraction"] for x in g),
            "max_iterations": max(x["iterations"] for x in g),
            "max_vi_residual": max(x["vi_residual"] for x in g),
            "max_regularised_nash_gap": max(x["regularised_nash_gap"] for x in g),
            "scipy_root_max_diff": max(x["scipy_root_max_diff"] for x in g),
            "min_qre_prob": min(x["min_prob"] for x in g)}


def transfer_summary(t: dict) -> dict:
    """One arm's transfer figures over the seed's games: the largest distance of a learner's QRE
    from the expert's policy (the claim's figure), and what it is made of: the estimate's own
    error, and learners that ended at another equilibrium than the estimate (train counts them:
    further than the uniqueness check's distinct_radius)."""
    g = t["games"]
    return {"tau": t["tau"], "n": t["n"], "runs_per_game": t["repetitions"] * t["learner_starts"],
            "max_policy_distance": max(x["max_distance"] for x in g),
            "max_estimate_error": max(x["max_estimate_error"] for x in g),
            "max_from_estimate": max(x["max_from_estimate"] for x in g),
            "games_elsewhere": int(sum(x["runs_elsewhere"] > 0 for x in g)),
            "runs_elsewhere_fraction": sum(x["runs_elsewhere"] for x in g) / sum(x["runs"] for x in g),
            "max_value_gap": max(x["max_value_gap"] for x in g),
            "min_converged_fraction": min(x["converged_fraction"] for x in g),
            "max_estimate_residual": max(x["max_estimate_residual"] for x in g)}


def seed_summary(res: dict) -> dict:
    """Every figure of one seed but the recovery fits, from its section of results.json."""
    u = res["uniqueness"]["games"]
    ver = res["verify"]
    verify = {"pennies_max_dev": max(ver["pennies_max_dev"]), "root_2x2_max_diff": ver["root_2x2_max_diff"],
              "mmd_zero_sum_max_diff": ver["mmd_zero_sum_max_diff"], "mmd_max_gap": ver["mmd_max_gap"],
              "markov_root_max_diff": max(g["scipy_root_max_diff"] for g in u)}
    verify["max_library_diff"] = max(verify["root_2x2_max_diff"], verify["mmd_zero_sum_max_diff"],
                                     verify["markov_root_max_diff"], verify["pennies_max_dev"])
    return {
        "uniqueness": uniqueness_summary(res["uniqueness"]),
        "uniqueness_control": uniqueness_summary(res["uniqueness_control"]),
        "transfer": transfer_summary(res["transfer"]),
        "transfer_control": transfer_summary(res["transfer_control"]),
        "tau_sweep": {tau_key(r["tau"]): {"games_with_several": r["games_with_several"],
                                          "games_not_all_converged": r["games_not_all_converged"]}
                      for r in res["tau_sweep"]},
        "verify": verify,
    }


def ambiguity_summary(amb: dict) -> dict:
    """The ambiguity example's figures (exact: the same on every seed; run once)."""
    cases = {k: v for k, v in amb.items() if k not in ("correspondence", "canonical_reward_difference", "seed")}
    zs = [v for k, v in cases.items() if k.endswith("zero_sum")]
    ii = [v for k, v in cases.items() if k.endswith("identical_interest")]
    return {
        "seed": amb["seed"],
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
    }


def main() -> None:
    with stage("mairl_entropy", "evaluate", MairlParams) as ctx:
        import json

        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics

        from .stats import curve, loglog_fit

        ep = ctx.params.evaluate
        res = json.loads(ctx.path(RESULTS).read_text())
        with np.load(ctx.path(SWEEP)) as z:
            sweep = {k: z[k] for k in z.files}
        missing = [s for s in ctx.seeds if str(s) not in res["per_seed"]]
        if missing:
            raise ValueError(f"{RESULTS} has no results for seeds {missing}: run the train stage for this profile")
        n = sweep["n"]
        keep = n >= ep.fit_n_min
        per_seed = {}
        for seed in ctx.seeds:
            r = res["per_seed"][str(seed)]
            m = seed_summary(r)
            rng = np.random.default_rng(np.random.SeedSequence([seed, 6]))
            rec = {"sampling": r["recovery"]["sampling"], "repetitions": r["recovery"]["repetitions"],
                   "n_min": int(n[keep].min()), "n_max": int(n[keep].max()), "n_points": int(keep.sum()),
                   "max_rationalised": r["recovery"]["max_rationalised"],
                   "all_converged": r["recovery"]["all_converged"]}
            for key in ERRORS:
                rec[key] = loglog_fit(n[keep], sweep[f"s{seed}/{key}"][:, keep], ep.n_boot, ep.ci_level, rng)
            m["recovery"] = rec
            per_seed[seed] = m
            t, c = m["transfer"], m["transfer_control"]
            print(f"  seed {seed}: learner's QRE from the expert (max sup distance) tau {res['tau']:g}: "
                  f"{t['max_policy_distance']:.3g} ({t['games_elsewhere']} games elsewhere), tau_control "
                  f"{res['tau_control']:g}: {c['max_policy_distance']:.3g} ({c['games_elsewhere']} games "
                  f"elsewhere); QRE max distance {m['uniqueness']['max_pairwise_distance']:.2e} (control "
                  f"{m['uniqueness_control']['max_pairwise_distance']:.2e}); reward-error slope "
                  f"{rec['reward_error']['slope']:.3f}", flush=True)
        amb = ambiguity_summary(res["ambiguity"])
        write_json(ctx.path(METRICS), per_seed_metrics(per_seed, ambiguity=amb, tau=res["tau"],
                                                       tau_control=res["tau_control"]))

        # the transfer: per seed and game, the learner runs' largest distance from the expert
        fig, ax = new_figure(figsize=(8, 4.4))
        rows = []
        for k, (arm, label, color) in enumerate((("transfer", f"tau = {res['tau']:g} (the study's)", "C0"),
                                                 ("transfer_control", f"tau_control = {res['tau_control']:g}",
                                                  "C3"))):
            for j, seed in enumerate(ctx.seeds):
                d = [g["max_distance"] for g in res["per_seed"][str(seed)][arm]["games"]]
                x = j + (k - 0.5) * 0.3 + np.linspace(-0.08, 0.08, len(d))
                ax.plot(x, d, "o", color=color, ms=4, label=label if j == 0 else None)
                rows += [{"arm": arm, "seed": seed, "game": gi, "max_distance": float(v)} for gi, v in enumerate(d)]
        ax.set(yscale="log", xlabel="verdict seed", ylabel="largest sup distance to the expert's policy",
               title="The learner's QRE of the recovered reward vs the expert's policy (each dot a game)")
        ax.set_xticks(range(len(ctx.seeds)), [str(s) for s in ctx.seeds])
        ax.legend(fontsize=8)
        save_png(fig, ctx.path(PLOT_TRANSFER))
        write_csv(ctx.path(CSV_TRANSFER), rows)

        # recovery: each seed's curve (geometric mean over its games), the fits' mean slope
        fig, axes = new_figure(1, 3, figsize=(15, 4.4))
        rows = [{"n": int(v)} for v in n]
        for ax, (key, (label, ref)) in zip(axes, ERRORS.items()):
            ys = np.array([np.exp(curve(sweep[f"s{seed}/{key}"])) for seed in ctx.seeds])
            for j, y in enumerate(ys):
                ax.plot(n, y, "-", color="0.7", lw=0.8, label="each seed (geometric mean over games)" if j == 0 else None)
            y = np.exp(np.log(ys).mean(axis=0))
            slopes = [per_seed[s]["recovery"][key]["slope"] for s in ctx.seeds]
            ax.plot(n, y, "o", color="C0", label="geometric mean over seeds")
            xs = n[keep].astype(float)
            icept = np.mean([per_seed[s]["recovery"][key]["intercept"] for s in ctx.seeds])
            ax.plot(xs, np.exp(icept) * xs ** np.mean(slopes), "-", color="C3",
                    label=f"mean fitted slope {np.mean(slopes):.3f} (seeds {min(slopes):.3f} to {max(slopes):.3f})")
            ax.plot(xs, y[keep][0] * (xs / xs[0]) ** ref, "--", color="0.4", label=f"slope {ref:g}")
            ax.set(xscale="log", yscale="log", xlabel="demonstrations n", title=label)
            ax.legend(fontsize=8)
            for r, v in zip(rows, y):
                r[key] = float(v)
        reps = res["per_seed"][str(ctx.seeds[0])]["recovery"]["repetitions"]
        axes[0].set_ylabel(f"mean over {reps} repetitions")
        fig.suptitle(f"Reward recovery from QRE demonstrations (tau = {res['tau']:g}, "
                     f"{len(ctx.seeds)} seeds)")
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


if __name__ == "__main__":
    main()
