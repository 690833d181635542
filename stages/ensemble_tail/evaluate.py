"""ensemble_tail evaluate: tail rates, fits, the claims' figures and the plots.

Per problem and method: the tail rate P(excess risk > threshold) at every n with its
Clopper-Pearson interval. The base learner's log tail is fitted against log n (log-log:
polynomial tail) and against n (log-linear: exponential tail) over the whole grid, with both
R^2. Each vote ensemble's log tail is fitted against n only where it has >= min_events
events; its slope is compared with the base's log-linear slope (ratio). The slopes' and the
ratio's intervals are scipy's BCa bootstrap over the replications (tails.py, through
stages/common/inference.py), one seed an interval drawn from ``rng``. At n = compare_n the
vote's upper Clopper-Pearson bound is divided by the base's rate. The bagging-average's tail is
expected to *grow* with n (its output keeps weight on the wrong vertices that size-k subsamples
pick, whatever n is): reported, not a bug. The tuned bagging-average (``bagged``, subsample size
a fraction of n: the musts' control) gets the same tail figures as the votes (point values; no
within-seed bootstrap: the verdict is over seeds).

Every verdict seed of tails.json is analysed on its own (its figures in ``per_seed``; the mean
over the seeds beside them, stages.common.seeds.per_seed_metrics); the ledger judges each claim
over the seeds. The plots and the CSV pool the seeds' replications (counts summed).

Outputs: reports/ensemble_tail/metrics.json, tails.png, base_fits.png, tails.csv.
"""
from __future__ import annotations

import numpy as np

from stages.common.runtime.stage import stage

from .params import EnsembleTailParams
from .paths import CSV_TAILS, METRICS, PLOT_BASE, PLOT_TAILS, TAILS

VOTES = ("move", "rove", "roves")
TAIL_ARMS = VOTES + ("bagged",)          # arms with the votes' tail figures (bagged: the control)
LABELS = {"base": "base (SAA on all n)", "move": "MoVE", "rove": "ROVE", "roves": "ROVEs",
          "bagging": "bagging-average (k fixed)", "bagged": "bagging-average (k tuned, control)"}


def analyse(res: dict, p, rng: np.random.Generator, intervals: bool = True) -> dict:
    """Every figure of one problem's sweep (see the module docstring); ``intervals=False`` leaves
    out the bootstrap intervals (the pooled figures of the plots)."""
    from .tails import clopper_pearson, fit_line, slope_interval, slope_ratio_interval

    def seed() -> int:          # one seed an interval, drawn from rng: deterministic, independent
        return int(rng.integers(2**32))

    n = np.asarray(res["n_grid"], float)
    R = int(res["replications"])
    boot = dict(R=R, n_boot=p.n_boot, level=p.ci_level)
    out: dict = {"n_grid": res["n_grid"], "replications": R, "threshold": res["threshold"],
                 "tail_index": res.get("tail_index")}
    for m in res["methods"]:
        k = np.asarray(res["counts"][m])
        lo, hi = clopper_pearson(k, R, p.ci_level)
        out[m] = {"events": k.tolist(), "rate": (k / R).tolist(), "ci_low": lo.tolist(), "ci_high": hi.tolist(),
                  "mean_excess": res["mean_excess"][m]}
    kb = np.asarray(res["counts"]["base"])
    base = out["base"]
    if (kb > 0).all():
        logp = np.log(kb / R)
        base["loglog"] = fit_line(np.log(n), logp)
        base["loglin"] = fit_line(n, logp)
        if intervals:
            base["loglog"]["ci_low"], base["loglog"]["ci_high"] = slope_interval(np.log(n), kb, **boot, seed=seed())
            base["loglin"]["ci_low"], base["loglin"]["ci_high"] = slope_interval(n, kb, **boot, seed=seed())
        base["r2_loglog_minus_loglin"] = base["loglog"]["r2"] - base["loglin"]["r2"]
        upper = n >= np.median(n)       # context: the log-log slope steepens toward its asymptote
        base["loglog_upper_half"] = fit_line(np.log(n[upper]), logp[upper])
    i_cmp = res["n_grid"].index(p.compare_n) if p.compare_n in res["n_grid"] else len(n) // 2
    n_cmp = res["n_grid"][i_cmp]
    for m in res["methods"]:
        if m in ("base", "bagging"):        # every other arm: a vote or a tuned bagging-average
            continue
        k = np.asarray(res["counts"][m])
        sel = k >= p.min_events
        v = out[m]
        v["fit_n"] = n[sel].astype(int).tolist()
        v["loglin"] = fit_line(n[sel], np.log(np.maximum(k[sel], 1) / R))
        boots = intervals and m in VOTES
        if sel.sum() >= 2:
            if boots:
                v["loglin"]["ci_low"], v["loglin"]["ci_high"] = slope_interval(n[sel], k[sel], **boot, seed=seed())
            if "loglin" in base:
                v["slope_ratio"] = v["loglin"]["slope"] / base["loglin"]["slope"]
                if boots:
                    v["slope_ratio_ci_low"], v["slope_ratio_ci_high"] = slope_ratio_interval(
                        n[sel], k[sel], n, kb, **boot, seed=seed())
        else:
            v["slope_ratio"] = float("nan")
        v["compare_n"] = n_cmp
        v["upper_at_compare_n"] = v["ci_high"][i_cmp]
        v["events_at_compare_n"] = int(k[i_cmp])
        v["base_rate_at_compare_n"] = base["rate"][i_cmp]
        v["upper_over_base_at_compare_n"] = (v["ci_high"][i_cmp] / base["rate"][i_cmp]
                                             if base["rate"][i_cmp] > 0 else float("nan"))
    for name, ks in res.get("bag_k", {}).items():
        out[name]["k"] = ks
    bag = out["bagging"]
    bag["rate_first_n"], bag["rate_last_n"] = bag["rate"][0], bag["rate"][-1]
    bag["last_minus_first"] = bag["rate"][-1] - bag["rate"][0]
    return out


def plot_tails(ax, prob: dict, title: str) -> None:
    n = np.asarray(prob["n_grid"], float)
    R = prob["replications"]
    for m, style in (("base", "o-"), ("move", "s-"), ("rove", "^-"), ("roves", "v-"), ("bagging", "x-"),
                     ("bagged", "d--")):
        if m not in prob:
            continue
        d = prob[m]
        rate = np.asarray(d["rate"])
        pos = rate > 0
        err = [rate[pos] - np.asarray(d["ci_low"])[pos], np.asarray(d["ci_high"])[pos] - rate[pos]]
        line = ax.errorbar(n[pos], rate[pos], yerr=err, fmt=style, ms=4, capsize=2, label=LABELS[m])
        if (~pos).any():
            ax.plot(n[~pos], np.asarray(d["ci_high"])[~pos], "v", color=line[0].get_color(), mfc="none",
                    ms=6, label=f"{LABELS[m]}: 0 of {R}, upper bound")
        if m in TAIL_ARMS and d.get("fit_n") and len(d["fit_n"]) >= 2 and np.isfinite(d["loglin"]["slope"]):
            xs = np.linspace(min(d["fit_n"]), n.max(), 50)
            ax.plot(xs, np.exp(d["loglin"]["intercept"] + d["loglin"]["slope"] * xs), ":",
                    color=line[0].get_color(), lw=1)
    b = prob["base"]
    if "loglog" in b:
        ax.plot(n, np.exp(b["loglog"]["intercept"]) * n ** b["loglog"]["slope"], "--", color="k", lw=1,
                label=f"base fit n^{b['loglog']['slope']:.2f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(n, [str(int(v)) for v in n], fontsize=7)
    ax.minorticks_off()
    ax.set_ylim(0.3 / R, 1.5)
    ax.set_xlabel("sample size n")
    ax.set_ylabel(f"P(excess risk > {prob['threshold']:g})")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6)


def plots(metrics: dict, root) -> None:
    from stages.common.plots import new_figure, save_png, write_csv

    probs = [k for k in ("lp", "regression") if k in metrics]
    rows = []
    for prob in probs:
        d = metrics[prob]
        for m in ("base", "move", "rove", "roves", "bagging", "bagged"):
            if m in d:
                for i, nn in enumerate(d["n_grid"]):
                    rows.append({"problem": prob, "method": m, "n": nn, "events": d[m]["events"][i],
                                 "rate": d[m]["rate"][i], "ci_low": d[m]["ci_low"][i], "ci_high": d[m]["ci_high"][i]})
    write_csv(root / CSV_TAILS, rows)
    fig, axes = new_figure(1, len(probs), figsize=(6.5 * len(probs), 4.8), squeeze=False)
    titles = {"lp": "stochastic LP on the simplex, Pareto noise a={a}",
              "regression": "regression model selection, Pareto noise a={a}"}
    for ax, prob in zip(axes[0], probs):
        plot_tails(ax, metrics[prob], titles[prob].format(a=metrics[prob]["tail_index"]) +
                   f"\n(all {metrics['n_seeds']} seeds' replications pooled; dotted: log-linear fits)")
    save_png(fig, root / PLOT_TAILS)

    b, n = metrics["lp"]["base"], np.asarray(metrics["lp"]["n_grid"], float)
    fig, (a1, a2) = new_figure(1, 2, figsize=(11, 4))
    logp = np.log(np.maximum(b["rate"], 1e-12))
    for ax, x, key, lab in ((a1, np.log(n), "loglog", "log n"), (a2, n, "loglin", "n")):
        ax.plot(x, logp, "o", label="base (SAA)")
        if key in b:
            f = b[key]
            ax.plot(x, f["intercept"] + f["slope"] * x, "-",
                    label=f"slope {f['slope']:.3g}, R^2 {f['r2']:.3f}")
        ax.set_xlabel(lab)
        ax.set_ylabel("log P(excess > threshold)")
        ax.set_title(f"base tail: log P vs {lab}")
        ax.legend(fontsize=8)
    save_png(fig, root / PLOT_BASE)


def analyse_seeds(tails: dict, p) -> dict[int, dict]:
    """{seed: {problem: figures}} for every seed of tails.json; each seed's bootstrap draws come
    from its own stream (seed, 7), so its figures depend on that seed only."""
    return {int(s): {prob: analyse(r, p, np.random.default_rng([int(s), 7])) for prob, r in res.items()}
            for s, res in tails["per_seed"].items()}


def pooled(tails: dict, p) -> dict:
    """The seeds' replications pooled (counts summed) per problem, without bootstrap intervals:
    what the plots and the CSV show."""
    runs = list(tails["per_seed"].values())
    out = {}
    for prob, r0 in runs[0].items():
        res = {**r0, "replications": sum(r[prob]["replications"] for r in runs),
               "counts": {m: np.sum([r[prob]["counts"][m] for r in runs], axis=0).tolist() for m in r0["methods"]},
               "mean_excess": {m: np.mean([r[prob]["mean_excess"][m] for r in runs], axis=0).tolist()
                               for m in r0["methods"]}}
        out[prob] = analyse(res, p, np.random.default_rng(0), intervals=False)
    out["n_seeds"] = len(runs)
    return out


def main() -> None:
    with stage("ensemble_tail", "evaluate", EnsembleTailParams) as ctx:
        import json

        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics

        p = ctx.params.evaluate
        tails = json.loads(ctx.path(TAILS).read_text())
        held = sorted(int(s) for s in tails["per_seed"])
        if held != sorted(ctx.seeds):
            raise SystemExit(f"data/ensemble_tail/tails.json holds seeds {held}, the profile's are "
                             f"{sorted(ctx.seeds)}: run `dvc repro stages/ensemble_tail/dvc.yaml:ensemble_tail-train`")
        per = analyse_seeds(tails, p)
        for s, m in per.items():
            mv, bg = m["lp"]["move"], m["lp"]["bagged"]
            print(f"  seed {s}: MoVE upper/base at n={mv['compare_n']} {mv['upper_over_base_at_compare_n']:.3f}, "
                  f"slope ratio {mv.get('slope_ratio', float('nan')):.1f}; tuned bagging (control) "
                  f"{bg['upper_over_base_at_compare_n']:.3f}, {bg.get('slope_ratio', float('nan')):.2f}", flush=True)
        metrics = per_seed_metrics(per, ci_level=p.ci_level, n_boot=p.n_boot, min_events=p.min_events)
        write_json(ctx.path(METRICS), metrics)
        plots(pooled(tails, p), ctx.root)


if __name__ == "__main__":
    main()
