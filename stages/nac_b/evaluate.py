"""nac_b evaluate: log-log regret slopes with intervals over seeds, the batching comparisons,
plots; reports/nac_b/metrics.json is what claims.yaml reads.

* ``regret.slope``: OLS slope of log(mean regret over runs) on log T for NAC-B; the interval
  resamples the runs of every T (runs are independent seeds) and refits. Same for the uniform
  baseline (``baseline.slope``). The optimal policy's regret is reported as a sanity reference;
  ``regret.slope_over_logT`` is the slope of regret / log T (one log factor of O~ removed).
* ``batching.fixed_step``: on the evaluation runs at the fixed step (the tuned step of the best
  batch size B* > 1), mean regret of batch 1 over that of B*, on the MDP with phase-alternating
  rewards, and the same on its control (no phase rewards); ``periodicity_harm_*`` = regret on
  the alternating MDP over regret on the control for the same configuration.
* ``batching.tuned``: every batch size at its own tuned step: batch 1's regret over the best
  batched one's (>= 1 means batching helps even when each batch size is tuned).
"""
from __future__ import annotations

from stages.common.fits import loglog_slope, loglog_slopes
from stages.common.runtime.stage import stage

from .params import NacBParams
from .paths import CSV_BATCHING, CSV_REGRET, METRICS, PLOT_BATCHING, PLOT_REGRET, PREPARE_METRICS, RESULTS

RNG_BOOT = 21


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
    import numpy as np

    T = res["T_grid"]
    out = {}
    for name in ("nacb", "uniform", "optimal"):
        cells = res[name]["regret"]
        s = slope_with_ci(T, cells, ep.n_boot, ep.ci_level, rng)
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
    return {"regret": nac, "baseline": out["uniform"], "optimal_policy": out["optimal"],
            "T_grid": T, "J_star": res["J_star"], "J_uniform": res["J_uniform"]}


def batching_metrics(res: dict, ep, rng) -> dict:
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
    tr = {b: reg["batching"][idx[(b, res["tuned_step"][str(b)])]] for b in res["batch_sizes"]}
    tuned["regret_by_batch"] = {str(b): float(v.mean()) for b, v in tr.items()}
    best_b = min((b for b in res["batch_sizes"] if b > 1), key=lambda b: tr[b].mean())
    rr = ratio_with_ci(tr[1], tr[best_b], ep.n_boot, ep.ci_level, rng)
    tuned.update({"best_batched": best_b, "ratio_b1_over_best_batched": rr["ratio"],
                  "ratio_ci": [rr["ci_low"], rr["ci_high"]], "regret_b1": float(tr[1].mean()),
                  "regret_best_batched": float(tr[best_b].mean()),
                  "best_is_batch1": bool(tr[1].mean() <= min(tr[b].mean() for b in tr if b > 1))})
    return {"T": res["T"], "J_star": res["J_star"], "J_uniform": res["J_uniform"],
            "fixed_step": fixed, "tuned": tuned,
            "tuning_diverged": {k: int(np.sum(res["tune"][k]["diverged"])) for k in ("batching", "control")}}


def plot_regret(res: dict, m: dict, path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    T = np.array(res["T_grid"], dtype=float)
    fig, (ax, ax2) = new_figure(1, 2, figsize=(11, 4.3))
    for key, name, color in (("regret", "NAC-B", "C0"), ("baseline", "uniform (no learning)", "C3")):
        s = m[key]
        mean, ci = np.array(s["mean"]), np.array(s["mean_ci"])
        ax.errorbar(T, mean, yerr=[mean - ci[:, 0], ci[:, 1] - mean], fmt="o", color=color, capsize=3,
                    label=f"{name}: slope {s['slope']:.2f} [{s['ci_low']:.2f}, {s['ci_high']:.2f}]")
        ax.plot(T, np.exp(s["intercept"]) * T ** s["slope"], "-", color=color, lw=1)
    opt = np.array(m["optimal_policy"]["mean"])
    pos = opt > 0
    ax.plot(T[pos], opt[pos], "s", color="C2", label="optimal policy (LP/RVI), mean regret > 0 shown")
    ax.plot(T, m["regret"]["mean"][0] * np.sqrt(T / T[0]), ":", color="grey", label=r"$\propto\sqrt{T}$")
    ax.set(xscale="log", yscale="log", xlabel="T", ylabel="regret  T J* - sum r_t",
           title=f"regret vs T (J* = {res['J_star']:.4f}, uniform {res['J_uniform']:.4f})")
    ax.legend(fontsize=7.5)
    ck = np.array(res["checkpoints"], dtype=float)
    gap = np.array(res["nacb"]["curve_gain_gap"])
    ax2.plot(ck, gap.mean(axis=0), color="C0", label="J* - J(pi_t), mean over runs")
    ax2.fill_between(ck, gap.min(axis=0), gap.max(axis=0), color="C0", alpha=0.2, label="min-max over runs")
    ax2.axhline(res["J_star"] - res["J_uniform"], color="C3", ls="--", label="uniform policy's gap")
    ax2.set(xscale="log", yscale="log", xlabel="t (largest T)", ylabel="gain gap of the policy in use",
            title=f"NAC-B at T = {int(T[-1])}: policy gain gap")
    ax2.legend(fontsize=7.5)
    save_png(fig, path)


def plot_batching(res: dict, m: dict, path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    steps = np.array(res["steps"])
    fig, (ax, ax2) = new_figure(1, 2, figsize=(11, 4.3))
    for k, b in enumerate(res["batch_sizes"]):
        for mdp, ls in (("batching", "-"), ("control", ":")):
            reg = np.array(res["tune"][mdp]["regret"][k]).mean(axis=1)
            ax.plot(steps, reg, ls, marker="o" if mdp == "batching" else None, ms=3, color=f"C{k}",
                    label=f"B={b}" + (" (alternating rewards)" if mdp == "batching" else " (control)"))
    ax.axvline(res["fixed_step"], color="k", lw=0.8, ls="--", label=f"fixed step {res['fixed_step']}")
    ax.set(xscale="log", yscale="log", xlabel="shared step alpha = beta = gamma",
           ylabel=f"mean regret at T = {res['T']} (tuning runs)", title="regret by step and batch size")
    ax.legend(fontsize=6.5, ncol=2, loc="lower left")
    bs = res["batch_sizes"]
    x = np.arange(len(bs))
    fx, tu = m["fixed_step"], m["tuned"]
    ax2.bar(x - 0.2, [fx["regret_by_batch"][str(b)] for b in bs], 0.4, color="C0",
            label=f"fixed step {fx['step']} (alternating)")
    ax2.bar(x + 0.2, [tu["regret_by_batch"][str(b)] for b in bs], 0.4, color="C1",
            label="each batch at its tuned step")
    for xi, b in zip(x, bs):
        d = fx["diverged_by_batch"][str(b)]
        if d:
            ax2.annotate(f"{d} diverged", (xi - 0.2, fx["regret_by_batch"][str(b)]), fontsize=7,
                         ha="center", va="bottom")
    ax2.set(xticks=x, xticklabels=[f"B={b}" for b in bs], yscale="log", ylabel="mean regret (evaluation runs)",
            title=f"period-{res.get('period', '')} MDP, rewards alternating by phase")
    ax2.legend(fontsize=7.5)
    save_png(fig, path)


def main() -> None:
    with stage("nac_b", "evaluate", NacBParams) as ctx:
        import json

        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import write_csv

        res = json.loads(ctx.path(RESULTS).read_text())
        ep = ctx.params.evaluate
        rng = np.random.default_rng([ctx.seed, RNG_BOOT])
        m = regret_metrics(res["regret"], ep, rng)
        m["batching"] = batching_metrics(res["batching"], ep, rng)
        mdps = json.loads(ctx.path(PREPARE_METRICS).read_text())
        m["gain"] = mdps["gain"]
        m["mdp"] = {"structure_violations": mdps["structure_violations"],
                    "policies_checked": mdps["policies_checked"],
                    "period_regret": mdps["regret"]["period"], "period_batching": mdps["batching"]["period"],
                    "J_star_batching": mdps["batching"]["J_star"], "J_star_control": mdps["control"]["J_star"]}
        res["batching"]["period"] = mdps["batching"]["period"]
        write_json(ctx.path(METRICS), m)
        rg = res["regret"]
        write_csv(ctx.path(CSV_REGRET), [
            {"T": T, "log10_T": float(np.log10(T)), "nacb_mean": m["regret"]["mean"][i],
             "nacb_ci_low": m["regret"]["mean_ci"][i][0], "nacb_ci_high": m["regret"]["mean_ci"][i][1],
             "nacb_fit": float(np.exp(m["regret"]["intercept"]) * T ** m["regret"]["slope"]),
             "uniform_mean": m["baseline"]["mean"][i],
             "uniform_fit": float(np.exp(m["baseline"]["intercept"]) * T ** m["baseline"]["slope"]),
             "optimal_mean": m["optimal_policy"]["mean"][i]}
            for i, T in enumerate(rg["T_grid"])])
        bt = res["batching"]
        write_csv(ctx.path(CSV_BATCHING), [
            {"step": s, "mdp": mdp, "batch": b, "mean_regret": float(np.mean(bt["tune"][mdp]["regret"][k][j])),
             "diverged": bt["tune"][mdp]["diverged"][k][j]}
            for mdp in ("batching", "control") for k, b in enumerate(bt["batch_sizes"])
            for j, s in enumerate(bt["steps"])])
        plot_regret(rg, m, ctx.path(PLOT_REGRET))
        plot_batching(bt, m["batching"], ctx.path(PLOT_BATCHING))
        r, b = m["regret"], m["batching"]
        print(f"  NAC-B slope {r['slope']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]; uniform slope "
              f"{m['baseline']['slope']:.3f}; fixed-step ratio B1/B{b['fixed_step']['best_batch']} = "
              f"{b['fixed_step']['ratio_b1_over_batched']:.2f}; tuned ratio "
              f"{b['tuned']['ratio_b1_over_best_batched']:.2f}", flush=True)


if __name__ == "__main__":
    main()
