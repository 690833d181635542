"""curriculum_rerm evaluate: per verdict seed, each arm's figures over that seed's replications,
paired differences, plots; reports/curriculum_rerm/metrics.json is what claims.yaml reads.

Every figure below is computed per verdict seed from that seed's replications and written under
``per_seed`` (``stages.common.seeds.per_seed_metrics``), beside its mean over the seeds; the
ledger judges the claims over the seeds.

* ``ridge``: mean final-task excess risk of each arm at every lambda; each arm at its own best
  lambda (``best``, ``best_lambda``: the lowest mean over the seed's replications, every arm with
  the same sweep); the fraction of replications in which the good curriculum beats direct training
  (equal target data), and in which the violating curriculum is *not* better than direct, at every
  lambda and their minimum over the sweep (context); the curricula's r; the equal-total-data ratio.
* ``sgd``: the SGD arms' mean excess risk at one lambda, beside the closed form at that lambda.
* ``digits``: mean test error per arm and paired differences against direct, pooled and
  reversed, with a t-interval over the seed's replications (context: the ledger's interval is
  over the seeds).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import CurriculumParams
from .paths import CSV_DIGITS, CSV_RIDGE, METRICS, PLOT_DIGITS, PLOT_RIDGE, RESULTS
from .rerm import RIDGE_ARMS, SGD_ARMS

DIGIT_ARMS = ("good", "violating", "reversed", "direct", "direct_long", "direct_total", "pooled")
# paired differences reported per seed: (name, arm, other arm)
DIGIT_PAIRS = (("good_minus_direct", "good", "direct"), ("violating_minus_direct", "violating", "direct"),
               ("good_minus_reversed", "good", "reversed"), ("good_minus_pooled", "good", "pooled"),
               ("good_minus_direct_total", "good", "direct_total"),
               ("good_minus_direct_long", "good", "direct_long"))


def paired_interval(diff, level: float) -> dict:
    """Mean of paired differences over replications and its t-interval (stages.common.stats.t_interval)."""
    import numpy as np

    from stages.common.stats import t_interval

    diff = np.asarray(diff, dtype=float)
    ci = t_interval(diff, level)
    return {"mean": ci["mean"], "sem": ci["sem"], "ci_low": ci["low"], "ci_high": ci["high"], "n": ci["n"],
            "negative": int((diff < 0).sum()), "negative_frac": float((diff < 0).mean())}


def ridge_metrics(res: dict) -> dict:
    """One seed's ridge figures; ``res['ridge.<arm>']`` is (replications, lambdas)."""
    import numpy as np

    lams = res["ridge.lambdas"]
    er = {a: res[f"ridge.{a}"] for a in RIDGE_ARMS}
    mean = {a: er[a].mean(axis=0) for a in RIDGE_ARMS}
    best = {a: int(np.argmin(mean[a])) for a in RIDGE_ARMS}
    good_wins = (er["good"] < er["direct"]).mean(axis=0)
    viol_not_better = (er["violating"] >= er["direct"]).mean(axis=0)
    m = {"lambdas": lams.tolist(), "replications": int(er["good"].shape[0]),
         "mean": {a: mean[a].tolist() for a in RIDGE_ARMS},
         "good_beats_direct_frac": good_wins.tolist(),
         "good_beats_direct_frac_min": float(good_wins.min()),
         "violating_not_better_frac": viol_not_better.tolist(),
         "violating_not_better_frac_min": float(viol_not_better.min()),
         "best_lambda": {a: float(lams[best[a]]) for a in RIDGE_ARMS},
         "best": {a: float(mean[a][best[a]]) for a in RIDGE_ARMS},
         "r": {"good_max": float(res["ridge.r_good"].max()), "reversed_max": float(res["ridge.r_reversed"].max()),
               "violating_mean": float(res["ridge.r_violating"].mean())}}
    # equal total data: each arm at its own best lambda, per replication
    g, t = er["good"][:, best["good"]], er["direct_total"][:, best["direct_total"]]
    m["total_data"] = {"good_over_direct_total": m["best"]["good"] / m["best"]["direct_total"],
                       "direct_total_wins_frac": float((t < g).mean())}
    return m


def sgd_metrics(res: dict) -> dict:
    """One seed's SGD figures; ``res['sgd.<arm>']`` is (replications,)."""
    import numpy as np

    s = {a: res[f"sgd.{a}"] for a in SGD_ARMS}
    cf = {a: res[f"sgd.closed_form.{a}"] for a in SGD_ARMS}
    return {"mean": {a: float(s[a].mean()) for a in SGD_ARMS},
            "closed_form_mean": {a: float(cf[a].mean()) for a in SGD_ARMS},
            "good_beats_direct_frac": float((s["good"] < s["direct"]).mean()),
            "violating_not_better_frac": float((s["violating"] >= s["direct"]).mean()),
            "rel_gap_to_closed_form": {a: float(np.mean(np.abs(s[a] - cf[a]) / cf[a])) for a in SGD_ARMS}}


def digits_metrics(res: dict, level: float) -> dict:
    """One seed's digits figures; ``res['digits.<arm>']`` is (replications,)."""
    err = {a: res[f"digits.{a}"] for a in DIGIT_ARMS}
    m = {"replications": int(len(err["good"])), "ci_level": level,
         "mean_error": {a: float(err[a].mean()) for a in DIGIT_ARMS}}
    for name, a, b in DIGIT_PAIRS:
        m[name] = paired_interval(err[a] - err[b], level)
    return m


def seed_slices(res: dict) -> dict:
    """``{seed: {key: that seed's array}}`` from the results file's stacked arrays."""
    seeds = [int(s) for s in res["seeds"]]
    return {s: {k: (v if k == "ridge.lambdas" else v[i]) for k, v in res.items() if k != "seeds"}
            for i, s in enumerate(seeds)}


def seed_metrics(r: dict, level: float) -> dict:
    return {"ridge": ridge_metrics(r), "sgd": sgd_metrics(r), "digits": digits_metrics(r, level)}


def plot_ridge(res: dict, m: dict, path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    lams = np.asarray(m["ridge"]["lambdas"])
    fig, (ax, ax2) = new_figure(1, 2, figsize=(11, 4.3))
    names = {"good": "good curriculum", "violating": "violating curriculum (control)",
             "reversed": "reversed curriculum", "direct": "direct (equal target data)",
             "direct_total": "direct (equal total data, all target)", "pooled": "pooled (curriculum's data, one task)"}
    n_seeds = len(res["seeds"])
    for k, a in enumerate(RIDGE_ARMS):
        v = res[f"ridge.{a}"].reshape(-1, len(lams))                    # every seed's replications
        ax.plot(lams, v.mean(axis=0), "o-", ms=3, color=f"C{k}", label=names[a])
        ax.fill_between(lams, np.quantile(v, 0.1, axis=0), np.quantile(v, 0.9, axis=0), color=f"C{k}", alpha=0.12)
    r = m["ridge"]
    ax.set(xscale="log", yscale="log", xlabel="lambda", ylabel="final-task excess risk ||w - w*||^2",
           title=f"biased ridge, {n_seeds} seeds x {int(r['replications'])} replications (band: 10-90%)")
    ax.title.set_fontsize(8.5)
    ax.legend(fontsize=7)
    s = m["sgd"]
    x = np.arange(len(SGD_ARMS))
    ax2.bar(x - 0.2, [s["mean"][a] for a in SGD_ARMS], 0.4, color="C0", label="SGD (tail-averaged)")
    ax2.bar(x + 0.2, [s["closed_form_mean"][a] for a in SGD_ARMS], 0.4, color="C7", label="closed form")
    ax2.set(xticks=x, xticklabels=[a.replace("_", "\n") for a in SGD_ARMS], yscale="log",
            ylabel="mean final-task excess risk (mean over seeds)",
            title="SGD on the biased objective, one lambda")
    ax2.title.set_fontsize(8.5)
    ax2.legend(fontsize=7.5)
    save_png(fig, path)


def plot_digits(m: dict, path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    per = m["per_seed"]
    seeds = list(per)
    fig, (ax, ax2) = new_figure(1, 2, figsize=(11, 4.3))
    for k, (key, a, b) in enumerate(DIGIT_PAIRS):
        vals = [per[s]["digits"][key]["mean"] for s in seeds]
        jitter = np.linspace(-0.15, 0.15, len(vals)) if len(vals) > 1 else np.zeros(1)
        ax.plot(k + jitter, vals, "o", ms=5, color=f"C{k}", alpha=0.8)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set(xticks=range(len(DIGIT_PAIRS)), xticklabels=[f"{a} -\n{b}" for _, a, b in DIGIT_PAIRS],
           ylabel="paired test-error difference (mean over a seed's replications)",
           title=f"digits MLP: one dot per verdict seed ({len(seeds)} seeds)")
    ax.tick_params(axis="x", labelsize=7)
    ax.title.set_fontsize(8.5)
    x = np.arange(len(DIGIT_ARMS))
    ax2.bar(x, [m["digits"]["mean_error"][a] for a in DIGIT_ARMS], color=[f"C{k}" for k in range(len(DIGIT_ARMS))])
    ax2.set(xticks=x, xticklabels=[a.replace("_", "\n") for a in DIGIT_ARMS],
            ylabel="mean test error (noisy digits), mean over seeds", title="test error per arm")
    ax2.tick_params(axis="x", labelsize=7)
    save_png(fig, path)


def main() -> None:
    with stage("curriculum_rerm", "evaluate", CurriculumParams) as ctx:
        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import write_csv
        from stages.common.seeds import gather_shards, per_seed_metrics

        with np.load(ctx.path(RESULTS)) as z:
            res = {k: z[k] for k in z.files}
        stored = [int(s) for s in res["seeds"]]
        gather_shards({RESULTS: stored}, ctx.seeds)      # the results hold the profile's verdict seeds
        level = ctx.params.evaluate.ci_level
        per = {s: seed_metrics(r, level) for s, r in seed_slices(res).items()}
        m = per_seed_metrics(per)
        write_json(ctx.path(METRICS), m)
        lams = res["ridge.lambdas"]
        write_csv(ctx.path(CSV_RIDGE), [
            {"lambda": float(lam), **{a: float(res[f"ridge.{a}"][:, :, i].mean()) for a in RIDGE_ARMS}}
            for i, lam in enumerate(lams)])
        write_csv(ctx.path(CSV_DIGITS), [
            {"seed": s, "replication": j, **{a: float(res[f"digits.{a}"][i, j]) for a in DIGIT_ARMS},
             "good_minus_direct": float(res["digits.good"][i, j] - res["digits.direct"][i, j])}
            for i, s in enumerate(stored) for j in range(res["digits.good"].shape[1])])
        plot_ridge(res, m, ctx.path(PLOT_RIDGE))
        plot_digits(m, ctx.path(PLOT_DIGITS))
        for s in stored:
            r, d = per[s]["ridge"], per[s]["digits"]
            print(f"  seed {s}: ridge (best lambda each) good {r['best']['good']:.1f}, direct {r['best']['direct']:.1f}, "
                  f"violating {r['best']['violating']:.1f}, pooled {r['best']['pooled']:.1f}; digits error good "
                  f"{d['mean_error']['good']:.4f}, direct {d['mean_error']['direct']:.4f}, violating "
                  f"{d['mean_error']['violating']:.4f}, pooled {d['mean_error']['pooled']:.4f}", flush=True)


if __name__ == "__main__":
    main()
