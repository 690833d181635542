"""curriculum_rerm evaluate: win fractions over seeds, paired t-intervals, plots;
reports/curriculum_rerm/metrics.json is what claims.yaml reads.

* ``ridge``: mean final-task excess risk of each arm at every lambda; the fraction of seeds in
  which the good curriculum beats direct training (equal target data), and in which the
  violating curriculum is *not* better than direct, at every lambda, and their minimum over the
  sweep (the claims need them to hold across the whole sweep, not at one picked lambda); each
  arm at its own best lambda (lowest mean), including direct training on the curriculum's total
  sample count all drawn from the target task (``direct_total``).
* ``sgd``: the same arms trained by SGD at one lambda, beside the closed form at that lambda.
* ``digits``: mean test error per arm and paired differences per seed (good - direct, violating -
  direct, good - direct_total, good - direct_long) with a t-interval (scipy.stats.t) over seeds.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import CurriculumParams
from .paths import CSV_DIGITS, CSV_RIDGE, METRICS, PLOT_DIGITS, PLOT_RIDGE, RESULTS
from .rerm import RIDGE_ARMS

DIGIT_ARMS = ("good", "violating", "direct", "direct_total", "direct_long")


def paired_interval(diff, level: float) -> dict:
    """Mean of per-seed paired differences and its t-interval (stages.common.stats.t_interval)."""
    import numpy as np

    from stages.common.stats import t_interval

    diff = np.asarray(diff, dtype=float)
    ci = t_interval(diff, level)
    return {"mean": ci["mean"], "sem": ci["sem"], "ci_low": ci["low"], "ci_high": ci["high"], "n": ci["n"],
            "negative": int((diff < 0).sum()), "negative_frac": float((diff < 0).mean())}


def ridge_metrics(res: dict) -> dict:
    import numpy as np

    lams = res["ridge.lambdas"]
    er = {a: res[f"ridge.{a}"] for a in RIDGE_ARMS}                    # (S, L)
    mean = {a: er[a].mean(axis=0) for a in RIDGE_ARMS}
    best = {a: int(np.argmin(mean[a])) for a in RIDGE_ARMS}
    good_wins = (er["good"] < er["direct"]).mean(axis=0)
    viol_not_better = (er["violating"] >= er["direct"]).mean(axis=0)
    m = {"lambdas": lams.tolist(), "seeds": int(er["good"].shape[0]),
         "mean": {a: mean[a].tolist() for a in RIDGE_ARMS},
         "good_beats_direct_frac": good_wins.tolist(),
         "good_beats_direct_frac_min": float(good_wins.min()),
         "violating_not_better_frac": viol_not_better.tolist(),
         "violating_not_better_frac_min": float(viol_not_better.min()),
         "best_lambda": {a: float(lams[best[a]]) for a in RIDGE_ARMS},
         "best": {a: float(mean[a][best[a]]) for a in RIDGE_ARMS},
         "r_good_max": float(res["ridge.r_good"].max()),
         "r_violating_mean": float(res["ridge.r_violating"].mean())}
    # equal total data: each arm at its own best lambda, per seed
    g, t = er["good"][:, best["good"]], er["direct_total"][:, best["direct_total"]]
    m["total_data"] = {"good_over_direct_total": m["best"]["good"] / m["best"]["direct_total"],
                       "direct_total_wins_frac": float((t < g).mean())}
    return m


def sgd_metrics(res: dict) -> dict:
    import numpy as np

    s = {a: res[f"sgd.{a}"] for a in RIDGE_ARMS}
    cf = {a: res[f"sgd.closed_form.{a}"] for a in RIDGE_ARMS}
    return {"mean": {a: float(s[a].mean()) for a in RIDGE_ARMS},
            "closed_form_mean": {a: float(cf[a].mean()) for a in RIDGE_ARMS},
            "good_beats_direct_frac": float((s["good"] < s["direct"]).mean()),
            "violating_not_better_frac": float((s["violating"] >= s["direct"]).mean()),
            "rel_gap_to_closed_form": {a: float(np.mean(np.abs(s[a] - cf[a]) / cf[a])) for a in RIDGE_ARMS}}


def digits_metrics(res: dict, level: float) -> dict:
    err = {a: res[f"digits.{a}"] for a in DIGIT_ARMS}
    return {"seeds": int(len(err["good"])), "ci_level": level,
            "mean_error": {a: float(err[a].mean()) for a in DIGIT_ARMS},
            "good_minus_direct": paired_interval(err["good"] - err["direct"], level),
            "violating_minus_direct": paired_interval(err["violating"] - err["direct"], level),
            "good_minus_direct_total": paired_interval(err["good"] - err["direct_total"], level),
            "good_minus_direct_long": paired_interval(err["good"] - err["direct_long"], level)}


def plot_ridge(res: dict, m: dict, path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    lams = np.asarray(m["ridge"]["lambdas"])
    fig, (ax, ax2) = new_figure(1, 2, figsize=(11, 4.3))
    names = {"good": "good curriculum", "violating": "violating curriculum",
             "direct": "direct (equal target data)", "direct_total": "direct (equal total data, all target)"}
    for k, a in enumerate(RIDGE_ARMS):
        v = res[f"ridge.{a}"]
        ax.plot(lams, v.mean(axis=0), "o-", ms=3, color=f"C{k}", label=names[a])
        ax.fill_between(lams, np.quantile(v, 0.1, axis=0), np.quantile(v, 0.9, axis=0), color=f"C{k}", alpha=0.15)
    r = m["ridge"]
    ax.set(xscale="log", yscale="log", xlabel="lambda", ylabel="final-task excess risk ||w - w*||^2",
           title=f"biased ridge, {r['seeds']} seeds (band: 10-90%); good < direct in "
                 f">= {r['good_beats_direct_frac_min']:.0%} of seeds at every lambda")
    ax.title.set_fontsize(8.5)
    ax.legend(fontsize=7.5)
    s = m["sgd"]
    x = np.arange(len(RIDGE_ARMS))
    ax2.bar(x - 0.2, [s["mean"][a] for a in RIDGE_ARMS], 0.4, color="C0", label="SGD (tail-averaged)")
    ax2.bar(x + 0.2, [s["closed_form_mean"][a] for a in RIDGE_ARMS], 0.4, color="C7", label="closed form")
    ax2.set(xticks=x, xticklabels=[a.replace("_", "\n") for a in RIDGE_ARMS], yscale="log",
            ylabel="mean final-task excess risk",
            title=f"SGD on the biased objective: good < direct in {s['good_beats_direct_frac']:.0%} of seeds")
    ax2.title.set_fontsize(8.5)
    ax2.legend(fontsize=7.5)
    save_png(fig, path)


def plot_digits(res: dict, m: dict, path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    d = m["digits"]
    fig, (ax, ax2) = new_figure(1, 2, figsize=(11, 4.3))
    pairs = (("good_minus_direct", "good - direct", "C0", ("good", "direct")),
             ("violating_minus_direct", "violating - direct", "C1", ("violating", "direct")),
             ("good_minus_direct_total", "good - direct\n(total data)", "C2", ("good", "direct_total")),
             ("good_minus_direct_long", "good - direct\n(as many steps)", "C4", ("good", "direct_long")))
    for k, (key, label, color, (a, b)) in enumerate(pairs):
        diff = res[f"digits.{a}"] - res[f"digits.{b}"]
        jitter = np.linspace(-0.15, 0.15, len(diff))
        ax.plot(k + jitter, diff, "o", ms=4, color=color, alpha=0.7)
        s = d[key]
        ax.errorbar([k + 0.3], [s["mean"]], yerr=[[s["mean"] - s["ci_low"]], [s["ci_high"] - s["mean"]]],
                    fmt="D", color="k", capsize=4)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set(xticks=range(len(pairs)), xticklabels=[p[1] for p in pairs], ylabel="paired test-error difference",
           title=f"digits MLP, per-seed paired differences (black: mean, {d['ci_level']:.0%} t-interval)")
    ax.title.set_fontsize(8.5)
    x = np.arange(len(DIGIT_ARMS))
    ax2.bar(x, [d["mean_error"][a] for a in DIGIT_ARMS], color=[f"C{k}" for k in range(len(DIGIT_ARMS))])
    ax2.set(xticks=x, xticklabels=[a.replace("_", "\n") for a in DIGIT_ARMS], ylabel="mean test error (noisy digits)",
            title=f"{d['seeds']} seeds")
    save_png(fig, path)


def main() -> None:
    with stage("curriculum_rerm", "evaluate", CurriculumParams) as ctx:
        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import write_csv

        with np.load(ctx.path(RESULTS)) as z:
            res = {k: z[k] for k in z.files}
        level = ctx.params.evaluate.ci_level
        m = {"ridge": ridge_metrics(res), "sgd": sgd_metrics(res), "digits": digits_metrics(res, level)}
        write_json(ctx.path(METRICS), m)
        write_csv(ctx.path(CSV_RIDGE), [
            {"lambda": float(lam), **{a: m["ridge"]["mean"][a][i] for a in RIDGE_ARMS},
             "good_beats_direct_frac": m["ridge"]["good_beats_direct_frac"][i],
             "violating_not_better_frac": m["ridge"]["violating_not_better_frac"][i]}
            for i, lam in enumerate(m["ridge"]["lambdas"])])
        write_csv(ctx.path(CSV_DIGITS), [
            {"seed": s, **{a: float(res[f"digits.{a}"][s]) for a in DIGIT_ARMS},
             "good_minus_direct": float(res["digits.good"][s] - res["digits.direct"][s])}
            for s in range(len(res["digits.good"]))])
        plot_ridge(res, m, ctx.path(PLOT_RIDGE))
        plot_digits(res, m, ctx.path(PLOT_DIGITS))
        r, d = m["ridge"], m["digits"]
        print(f"  ridge (best lambda each): good {r['best']['good']:.1f}, direct {r['best']['direct']:.1f}, "
              f"violating {r['best']['violating']:.1f}, direct_total {r['best']['direct_total']:.1f}; "
              f"good < direct in >= {r['good_beats_direct_frac_min']:.0%} of seeds at every lambda; "
              f"digits good - direct {d['good_minus_direct']['mean']:+.4f} "
              f"[{d['good_minus_direct']['ci_low']:+.4f}, {d['good_minus_direct']['ci_high']:+.4f}]", flush=True)


if __name__ == "__main__":
    main()
