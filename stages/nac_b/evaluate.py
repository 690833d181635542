"""nac_b evaluate: log-log regret slopes, the batching comparisons and plots, for every verdict
seed; reports/nac_b/metrics.json is what claims.yaml reads.

Per verdict seed (``ctx.seeds``; one independent repetition of the whole experiment, its MDPs
included), from that seed's runs:

* ``regret.slope``: OLS slope of log(mean regret over the seed's runs) on log T for NAC-B; its
  within-seed interval resamples the runs of every T and refits. The same for the control arms
  (``control_arms.no_batching``: NAC-B without batching; ``control_arms.plain_ac``: a plain
  actor-critic) and the uniform policy (``baseline``); the optimal policy's regret is a sanity
  reference; ``regret.slope_over_logT`` is the slope of regret / log T (one log factor of O~
  removed).
* ``batching.fixed_step``: on the evaluation runs at the fixed step (the tuned step of the best
  batch size B* > 1), mean regret of batch 1 over that of B*, on the MDP with phase-alternating
  rewards and on its control (no phase rewards); ``periodicity_harm_*`` = regret on the
  alternating MDP over regret on the control for the same configuration.
* ``batching.tuned``: every batch size at its own tuned step: batch 1's regret over the best
  batched one's (>= 1: batching helps even when each batch size is tuned), and the same
  configurations on the control MDP (``control_ratio_b1_over_best_batched``).

metrics.json: ``per_seed`` (each seed's figures) beside the mean over the seeds of every figure
(stages.common.seeds.per_seed_metrics); figures that mean something within one seed only
(bootstrap intervals over its runs) are kept in ``per_seed`` alone.
"""
from __future__ import annotations

from stages.common.fits import loglog_slope, loglog_slopes
from stages.common.runtime.stage import fail, stage

from .params import NacBParams
from .paths import CSV_BATCHING, CSV_REGRET, METRICS, PLOT_BATCHING, PLOT_REGRET, PREPARE_METRICS, RESULTS

RNG_BOOT = 21
# figures that mean something within one seed only: kept in per_seed, not averaged over seeds
WITHIN_SEED = ("ci_low", "ci_high", "mean_ci", "ratio_ci", "control_ratio_ci", "boot_valid")
ARM_LABEL = {"nacb": "NAC-B", "no_batching": "no batching (ablation)", "plain_ac": "plain actor-critic",
             "uniform": "uniform (no learning)"}
ARM_KEY = {"nacb": ("regret",), "no_batching": ("control_arms", "no_batching"),
           "plain_ac": ("control_arms", "plain_ac"), "uniform": ("baseline",)}


def slope_with_ci(T, regret, n_boot: int, level: float, rng) -> dict:
    """Slope of log mean regret on log T and its percentile bootstrap interval; ``regret`` is a
    list (one per T) of per-run regrets, resampled independently at every T."""
    import numpy as np

    cells = [np.asarray(c, dtype=float) for c in regret]
    means = np.array([c.mean() for c in cells])
    slope, icpt = loglog_slope(T, means)
    boots = np.empty((n_boot, len(cells)))
    for j, c in enumerate(cells):
        boots[:, j] = c[rng.integers(0, len(c), size=(n_boot, len(c)))].mean(axis=1)
    ok = (boots > 0).all(axis=1)
    a = (1 - level) / 2
    lo, hi = (np.quantile(loglog_slopes(T, boots[ok]), [a, 1 - a]).tolist() if ok.any() else [float("nan")] * 2)
    mean_ci = [np.quantile(boots[:, j], [a, 1 - a]).tolist() for j in range(len(cells))]
    return {"slope": slope, "intercept": icpt, "ci_low": lo, "ci_high": hi, "boot_valid": int(ok.sum()),
            "mean": means.tolist(), "mean_ci": mean_ci, "runs_per_T": [len(c) for c in cells]}


def ratio_with_ci(num, den, n_boot: int, level: float, rng) -> dict:
    """mean(num) / mean(den) over independent runs, with a percentile bootstrap interval."""
    import numpy as np

    num, den = np.asarray(num, float), np.asarray(den, float)
    r = num.mean() / den.mean()
    bn = num[rng.integers(0, len(num), (n_boot, len(num)))].mean(axis=1)
    bd = den[rng.integers(0, len(den), (n_boot, len(den)))].mean(axis=1)
    a = (1 - level) / 2
    lo, hi = np.quantile(bn / bd, [a, 1 - a]).tolist()
    return {"ratio": float(r), "ci_low": lo, "ci_high": hi}


def regret_metrics(res: dict, ep, rng) -> dict:
    """One seed's regret figures (``res``: its regret sweep from results.json)."""
    import numpy as np

    T = res["T_grid"]
    out = {}
    for name in ("nacb", "no_batching", "plain_ac", "uniform", "optimal"):
        s = slope_with_ci(T, res[name]["regret"], ep.n_boot, ep.ci_level, rng)
        s["diverged"] = int(sum(res[name]["diverged"]))
        s["regret_at_T_max"] = s["mean"][-1]
        out[name] = s
    nac = out["nacb"]
    nac["regret_over_sqrtT"] = (np.array(nac["mean"]) / np.sqrt(T)).tolist()
    # O~(sqrt T) allows log factors: the slope of log(regret / log T) on log T is the slope
    # with one log factor taken out (0.5 for c sqrt(T) log T)
    nac["slope_over_logT"] = loglog_slope(T, np.array(nac["mean"]) / np.log(T))[0]
    nac["epochs"] = res["nacb"]["epochs"]
    nac["inner_steps"] = res["nacb"]["inner_steps"]
    gap = np.array(res["nacb"]["curve_gain_gap"])                    # (runs, checkpoints)
    nac["final_gain_gap_mean"] = float(gap[:, -1].mean())
    nac["regret_share_of_uniform_at_T_max"] = nac["mean"][-1] / out["uniform"]["mean"][-1]
    for name in ("no_batching", "plain_ac"):
        out[name]["regret_over_nacb_at_T_max"] = out[name]["mean"][-1] / nac["mean"][-1]
    return {"regret": nac, "control_arms": {"no_batching": out["no_batching"], "plain_ac": out["plain_ac"]},
            "baseline": out["uniform"], "optimal_policy": out["optimal"],
            "T_grid": T, "J_star": res["J_star"], "J_uniform": res["J_uniform"]}


def batching_metrics(res: dict, ep, rng) -> dict:
    """One seed's batching figures (``res``: its batching sweep from results.json)."""
    import numpy as np

    configs = [tuple(c) for c in res["eval"]["configs"]]
    step0, bstar = res["fixed_step"], res["best_batch"]
    idx = {c: i for i, c in enumerate(configs)}
    reg = {k: np.array(res["eval"][k]["regret"]) for k in ("batching", "control")}
    div = {k: res["eval"][k]["diverged"] for k in ("batching", "control")}
    i1, ib = idx[(1, step0)], idx[(bstar, step0)]
    fixed = {"step": step0, "best_batch": bstar, "eval_runs": int(reg["batching"].shape[1])}
    for k in ("batching", "control"):
        rr = ratio_with_ci(reg[k][i1], reg[k][ib], ep.n_boot, ep.ci_level, rng)
        pre = "" if k == "batching" else "control_"
        fixed[f"{pre}ratio_b1_over_batched"] = rr["ratio"]
        fixed[f"{pre}ratio_ci"] = [rr["ci_low"], rr["ci_high"]]
        fixed[f"{pre}regret_b1"] = float(reg[k][i1].mean())
        fixed[f"{pre}regret_batched"] = float(reg[k][ib].mean())
        fixed[f"{pre}diverged_b1"] = int(div[k][i1])
        fixed[f"{pre}diverged_batched"] = int(div[k][ib])
    for b, i in ((1, i1), (bstar, ib)):
        fixed[f"periodicity_harm_b{b}" if b == 1 else "periodicity_harm_batched"] = float(
            reg["batching"][i].mean() / reg["control"][i].mean())
    fixed["regret_by_batch"] = {str(b): float(reg["batching"][idx[(b, step0)]].mean()) for b in res["batch_sizes"]}
    fixed["diverged_by_batch"] = {str(b): int(div["batching"][idx[(b, step0)]]) for b in res["batch_sizes"]}
    tuned = {"step": res["tuned_step"]}
    tr = {k: {b: reg[k][idx[(b, res["tuned_step"][str(b)])]] for b in res["batch_sizes"]}
          for k in ("batching", "control")}
    tuned["regret_by_batch"] = {str(b): float(v.mean()) for b, v in tr["batching"].items()}
    best_b = min((b for b in res["batch_sizes"] if b > 1), key=lambda b: tr["batching"][b].mean())
    rr = ratio_with_ci(tr["batching"][1], tr["batching"][best_b], ep.n_boot, ep.ci_level, rng)
    rc = ratio_with_ci(tr["control"][1], tr["control"][best_b], ep.n_boot, ep.ci_level, rng)
    tuned.update({"best_batched": best_b, "ratio_b1_over_best_batched": rr["ratio"],
                  "ratio_ci": [rr["ci_low"], rr["ci_high"]], "regret_b1": float(tr["batching"][1].mean()),
                  "regret_best_batched": float(tr["batching"][best_b].mean()),
                  "control_ratio_b1_over_best_batched": rc["ratio"],
                  "control_ratio_ci": [rc["ci_low"], rc["ci_high"]],
                  "best_is_batch1": bool(tr["batching"][1].mean()
                                         <= min(v.mean() for b, v in tr["batching"].items() if b > 1))})
    return {"T": res["T"], "J_star": res["J_star"], "J_uniform": res["J_uniform"],
            "fixed_step": fixed, "tuned": tuned,
            "tuning_diverged": {k: int(np.sum(res["tune"][k]["diverged"])) for k in ("batching", "control")}}


def seed_figures(res: dict, prep: dict, ep, seed: int) -> dict:
    """Every figure of one seed: ``res`` its results (regret and batching sweeps), ``prep`` its
    prepare metrics."""
    import numpy as np

    rng = np.random.default_rng([seed, RNG_BOOT])
    m = regret_metrics(res["regret"], ep, rng)
    m["batching"] = batching_metrics(res["batching"], ep, rng)
    m["gain"] = prep["gain"]
    m["mdp"] = {"structure_violations": prep["structure_violations"],
                "policies_checked": prep["policies_checked"],
                "period_regret": prep["regret"]["period"], "period_batching": prep["batching"]["period"],
                "J_star_batching": prep["batching"]["J_star"], "J_star_control": prep["control"]["J_star"]}
    return m


def drop_within_seed(tree):
    if isinstance(tree, dict):
        return {k: drop_within_seed(v) for k, v in tree.items() if k not in WITHIN_SEED}
    return tree


def seed_metrics(results: dict, **shared) -> dict:
    """metrics.json: ``per_seed`` (every seed's figures) beside the mean over the seeds of every
    figure that is not a within-seed one (stages.common.seeds.per_seed_metrics)."""
    from stages.common.seeds import per_seed_metrics

    out = per_seed_metrics(results, **shared)
    return {**drop_within_seed({k: v for k, v in out.items() if k != "per_seed"}), "per_seed": out["per_seed"]}


def lookup(tree: dict, keys) -> dict:
    for k in keys:
        tree = tree[k]
    return tree


def plot_regret(results: dict, per_seed: dict, path) -> None:
    """Left: regret vs T per arm (each seed a thin line, the mean over seeds thick); right: each
    seed's slope per arm, with the theorem's exponent 1/2 (sqrt T) as a line."""
    import numpy as np

    from stages.common.plots import new_figure, save_png

    seeds = list(per_seed)
    T = np.array(results[seeds[0]]["regret"]["T_grid"], dtype=float)
    fig, (ax, ax2) = new_figure(1, 2, figsize=(11, 4.3))
    for k, (arm, label) in enumerate(ARM_LABEL.items()):
        color = f"C{k}"
        curves = np.array([lookup(per_seed[s], ARM_KEY[arm])["mean"] for s in seeds])
        for c in curves:
            ax.plot(T, c, "-", color=color, lw=0.6, alpha=0.5)
        slopes = [lookup(per_seed[s], ARM_KEY[arm])["slope"] for s in seeds]
        ax.plot(T, curves.mean(axis=0), "o-", color=color, lw=1.8, ms=4,
                label=f"{label}: slope {np.mean(slopes):.2f} (mean of {len(seeds)} seeds)")
        ax2.plot(np.full(len(seeds), k) + np.linspace(-0.15, 0.15, len(seeds)), slopes, "o", color=color)
    opt = np.array([per_seed[s]["optimal_policy"]["mean"] for s in seeds]).mean(axis=0)
    pos = opt > 0
    ax.plot(T[pos], opt[pos], "s", color="grey", ms=4, label="optimal policy (LP/RVI), mean > 0 shown")
    ax.set(xscale="log", yscale="log", xlabel="T", ylabel="regret  T J* - sum r_t (mean over runs)",
           title=f"regret vs T, verdict seeds {seeds}")
    ax.legend(fontsize=7)
    ax2.axhline(0.5, color="k", lw=0.8, ls="--", label="sqrt T (the theorem's exponent, log factors aside)")
    ax2.set(xticks=range(len(ARM_LABEL)), xticklabels=[v.split(" (")[0] for v in ARM_LABEL.values()],
            ylabel="log-log regret slope (one dot per seed)", title="per-seed slopes")
    ax2.legend(fontsize=7.5)
    save_png(fig, path)


def plot_batching(results: dict, per_seed: dict, path) -> None:
    """Left: mean regret (tuning runs, mean over seeds) by shared step and batch size; right:
    each seed's batch-1 / best batched ratio at the tuned steps, on both MDPs."""
    import numpy as np

    from stages.common.plots import new_figure, save_png

    seeds = list(per_seed)
    r0 = results[seeds[0]]["batching"]
    steps = np.array(r0["steps"])
    fig, (ax, ax2) = new_figure(1, 2, figsize=(11, 4.3))
    for k, b in enumerate(r0["batch_sizes"]):
        for mdp, ls in (("batching", "-"), ("control", ":")):
            reg = np.mean([np.array(results[s]["batching"]["tune"][mdp]["regret"][k]).mean(axis=1) for s in seeds],
                          axis=0)
            ax.plot(steps, reg, ls, marker="o" if mdp == "batching" else None, ms=3, color=f"C{k}",
                    label=f"B={b}" + (" (alternating rewards)" if mdp == "batching" else " (control)"))
    ax.set(xscale="log", yscale="log", xlabel="shared step alpha = beta = gamma",
           ylabel=f"mean regret at T = {r0['T']} (tuning runs, mean over seeds)",
           title=f"period-{r0['period']} MDP: regret by step and batch size")
    ax.legend(fontsize=6.5, ncol=2, loc="lower left")
    for j, (key, label) in enumerate((("ratio_b1_over_best_batched", "alternating rewards"),
                                      ("control_ratio_b1_over_best_batched", "control (no phase rewards)"))):
        v = [per_seed[s]["batching"]["tuned"][key] for s in seeds]
        ax2.plot(np.full(len(v), j) + np.linspace(-0.15, 0.15, len(v)), v, "o", color=f"C{j}", label=label)
    ax2.axhline(1.0, color="k", lw=0.8, ls="--")
    ax2.set(xticks=[0, 1], xticklabels=["alternating", "control"], yscale="log",
            ylabel="regret(B = 1) / regret(best B > 1), tuned steps", title="each batch size at its tuned step")
    ax2.legend(fontsize=7.5)
    save_png(fig, path)


def main() -> None:
    with stage("nac_b", "evaluate", NacBParams) as ctx:
        import json

        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import write_csv

        seeds = list(ctx.seeds)
        data = json.loads(ctx.path(RESULTS).read_text())
        prep = json.loads(ctx.path(PREPARE_METRICS).read_text())["per_seed"]
        missing = [s for s in seeds if str(s) not in data["per_seed"] or str(s) not in prep]
        if missing:
            fail(f"{RESULTS} or {PREPARE_METRICS} has no figures for verdict seeds {missing} (another profile's "
                 "outputs?); run `dvc repro stages/nac_b/dvc.yaml`")
        ep = ctx.params.evaluate
        results = {s: data["per_seed"][str(s)] for s in seeds}
        per_seed = {s: seed_figures(results[s], prep[str(s)], ep, s) for s in seeds}
        write_json(ctx.path(METRICS), seed_metrics(per_seed))
        T = results[seeds[0]]["regret"]["T_grid"]

        def over_seeds(arm, field, i):
            return float(np.mean([lookup(per_seed[s], ARM_KEY[arm])[field][i] for s in seeds]))

        rows = []
        for i, t in enumerate(T):
            row = {"T": t, "log10_T": float(np.log10(t))}
            for arm in ("nacb", "no_batching", "plain_ac", "uniform"):
                row[f"{arm}_mean"] = over_seeds(arm, "mean", i)
                fits = [lookup(per_seed[s], ARM_KEY[arm]) for s in seeds]
                row[f"{arm}_fit"] = float(np.mean([np.exp(f["intercept"]) * t ** f["slope"] for f in fits]))
            row["optimal_mean"] = float(np.mean([per_seed[s]["optimal_policy"]["mean"][i] for s in seeds]))
            rows.append(row)
        write_csv(ctx.path(CSV_REGRET), rows)
        b0 = results[seeds[0]]["batching"]
        write_csv(ctx.path(CSV_BATCHING), [
            {"step": st, "mdp": mdp, "batch": b,
             "mean_regret": float(np.mean([np.mean(results[s]["batching"]["tune"][mdp]["regret"][k][j]) for s in seeds])),
             "diverged": int(sum(results[s]["batching"]["tune"][mdp]["diverged"][k][j] for s in seeds))}
            for mdp in ("batching", "control") for k, b in enumerate(b0["batch_sizes"])
            for j, st in enumerate(b0["steps"])])
        plot_regret(results, per_seed, ctx.path(PLOT_REGRET))
        plot_batching(results, per_seed, ctx.path(PLOT_BATCHING))
        for s in seeds:
            m = per_seed[s]
            print(f"  seed {s}: NAC-B slope {m['regret']['slope']:.3f}, no batching "
                  f"{m['control_arms']['no_batching']['slope']:.3f}, plain AC {m['control_arms']['plain_ac']['slope']:.3f},"
                  f" uniform {m['baseline']['slope']:.3f}; tuned ratio B1/best "
                  f"{m['batching']['tuned']['ratio_b1_over_best_batched']:.2f} (control "
                  f"{m['batching']['tuned']['control_ratio_b1_over_best_batched']:.2f})", flush=True)


if __name__ == "__main__":
    main()
