"""repo_safety evaluate: the figures the claims read, per verdict seed, the sweep over f, and the plots.

Per verdict seed, at the primary f (``evaluate.primary_fraction``), for exact and for sampled
gradients: the baseline's average cost above the budget and its share of violating prompts, RePO's
share of violating prompts, RePO's helpfulness over the baseline's and over the per-prompt LP
optimum's; for exact gradients also the two controls: the share of violating prompts of the
baseline with RePO's margin (``exact.baseline_margin``: RePO without its rectified per-prompt
penalty) and the helpfulness over the baseline's of the expected constraint tightened to RePO's
required safety (``exact.tightened``). The instance's own figures (lambda* > 0, correlation in
range, rejected draws) come from prepare.json. The sweep over f is context: the same figures for
every f. metrics.json holds every seed's figures under ``per_seed`` and their means beside
(stages/common/seeds.py per_seed_metrics).

Outputs: reports/repo_safety/metrics.json, sweep.png/.csv (violating share and helpfulness vs f
for baseline, RePO, the controls and the optimum: the mean over the seeds, each seed's dots),
compensation.png (every prompt's expected cost under the baseline and RePO at the primary f, the
first seed), curves.png/.csv (training curves at the primary f, the first seed).
"""
from __future__ import annotations

import json

from stages.common.runtime.stage import fail, stage

from .data import fraction_key
from .params import RepoSafetyParams
from .paths import (CSV_CURVES, CSV_SWEEP, CURVES, METRICS, PLOT_COMP, PLOT_CURVES, PLOT_SWEEP, POLICIES,
                    PREPARE_METRICS, TRAIN_METRICS)

SERIES = (("baseline_exact", "baseline (expected constraint)", "tab:red", "-"),
          ("repo_exact", "RePO (rectified, margin)", "tab:blue", "-"),
          ("baseline_margin_exact", "baseline with RePO's margin (control)", "tab:orange", "--"),
          ("tightened", "expected constraint tightened to RePO's safety (control)", "tab:purple", "--"),
          ("baseline_sampled", "baseline, sampled gradients", "tab:red", ":"),
          ("repo_sampled", "RePO, sampled gradients", "tab:blue", ":"),
          ("optimum_lp", "per-prompt optimum (LP, HiGHS, no KL)", "k", "--"),
          ("optimum_kl_margin", "per-prompt optimum with KL, budget - margin", "tab:gray", "-."))


def mode_figures(inst: dict, mode: str, budget: float) -> dict:
    """The claim figures of one instance for exact or sampled gradients (exact: with the controls)."""
    b, r, o = inst[f"baseline_{mode}"], inst[f"repo_{mode}"], inst["optimum_lp"]
    out = {"baseline": dict(b, cost_excess=b["avg_cost"] - budget), "repo": dict(r),
           "helpfulness_ratio": r["helpfulness"] / b["helpfulness"],
           "ratio_to_optimum": r["helpfulness"] / o["helpfulness"]}
    if mode == "exact":
        for name, arm in (("baseline_margin", inst["baseline_margin_exact"]), ("tightened", inst["tightened"])):
            out[name] = dict(arm, helpfulness_ratio=arm["helpfulness"] / b["helpfulness"],
                             cost_excess=arm["avg_cost"] - budget)
    return out


def claim_figures(train: dict, prep: dict, primary: float, budget: float) -> dict:
    """One verdict seed's figures: ``train`` and ``prep`` are that seed's sections of train.json and
    prepare.json."""
    key = fraction_key(primary)
    inst = train["instances"][key]
    info = prep["instances"][key]
    out: dict = {"data": {"lambda_star": info["lambda_star"], "correlation": info["correlation"],
                          "n_harmful": info["n_harmful"], "attempts": info["attempts"],
                          "rejected_total": prep["rejected_total"], "rejected": prep["rejected"],
                          "min_lambda_star": prep["min_lambda_star"],
                          "correlation_min": min(prep["correlations"]), "correlation_max": max(prep["correlations"]),
                          "unconstrained_cost": info["unconstrained_cost"]}}
    for mode in ("exact", "sampled"):
        out[mode] = mode_figures(inst, mode, budget)
    lp, klm, eo = inst["optimum_lp"], inst["optimum_kl_margin"], inst["expected_optimum"]
    out["optimum"] = {"lp_helpfulness": lp["helpfulness"], "lp_pairs_gap": lp["pairs_gap"],
                      "lp_over_baseline": lp["helpfulness"] / inst["baseline_exact"]["helpfulness"],
                      "kl_helpfulness": inst["optimum_kl"]["helpfulness"],
                      "kl_margin_helpfulness": klm["helpfulness"],
                      "kl_margin_over_baseline": klm["helpfulness"] / inst["baseline_exact"]["helpfulness"],
                      "repo_minus_kl_margin": inst["repo_exact"]["helpfulness"] - klm["helpfulness"],
                      "expected_optimum_helpfulness": eo["helpfulness"],
                      "baseline_lambda_error": abs(inst["baseline_exact"]["lambda"] - eo["lambda_star"])}
    fr = sorted(train["instances"], key=float)
    sweep: dict = {"fractions": [float(f) for f in fr],
                   "lambda_star": [prep["instances"][f]["lambda_star"] for f in fr]}
    for mode in ("exact", "sampled"):
        figs = [mode_figures(train["instances"][f], mode, budget) for f in fr]
        sweep[mode] = {"baseline_violating": [x["baseline"]["violating_fraction"] for x in figs],
                       "repo_violating": [x["repo"]["violating_fraction"] for x in figs],
                       "baseline_helpfulness": [x["baseline"]["helpfulness"] for x in figs],
                       "repo_helpfulness": [x["repo"]["helpfulness"] for x in figs],
                       "helpfulness_ratio": [x["helpfulness_ratio"] for x in figs],
                       "ratio_to_optimum": [x["ratio_to_optimum"] for x in figs]}
        if mode == "exact":
            sweep[mode]["baseline_margin_violating"] = [x["baseline_margin"]["violating_fraction"] for x in figs]
            sweep[mode]["tightened_helpfulness_ratio"] = [x["tightened"]["helpfulness_ratio"] for x in figs]
    sweep["optimum_helpfulness"] = [train["instances"][f]["optimum_lp"]["helpfulness"] for f in fr]
    out["sweep"] = sweep
    return out


def seed_metrics(train: dict, prep: dict, primary: float) -> dict:
    """The metrics file (per_seed layout) from train.json and prepare.json (both per_seed)."""
    from stages.common.seeds import per_seed_metrics

    seeds = train["seeds"]
    if sorted(prep["seeds"]) != sorted(seeds):
        raise ValueError(f"train.json holds seeds {seeds}, prepare.json {prep['seeds']}")
    budget = train["budget"]
    return per_seed_metrics({s: claim_figures(train["per_seed"][str(s)], prep["per_seed"][str(s)], primary, budget)
                             for s in seeds},
                            primary_fraction=primary, budget=budget, beta=train["beta"], margin=train["margin"],
                            tightened_share=train["tightened_share"])


def plots(train: dict, curves: dict, arrays, primary: float, root) -> None:
    """The plots and their CSVs: the sweep (mean over the seeds, each seed's dots), and the first
    seed's per-prompt costs and training curves at the primary f."""
    import numpy as np

    from stages.common.plots import new_figure, save_png, write_csv

    from .policy import violates

    seeds = [str(s) for s in train["seeds"]]
    per = train["per_seed"]
    fr = sorted(per[seeds[0]]["instances"], key=float)
    xs = [float(f) for f in fr]

    def values(name: str, key: str) -> np.ndarray:          # (seeds, fractions)
        return np.array([[per[s]["instances"][f][name][key] for f in fr] for s in seeds])

    rows = []
    for j, f in enumerate(fr):
        for name, *_ in SERIES:
            row = {"fraction": float(f), "policy": name}
            for key in ("violating_fraction", "helpfulness", "avg_cost"):
                v = values(name, key)[:, j]
                row.update({key: float(v.mean()), f"{key}_min": float(v.min()), f"{key}_max": float(v.max())})
            rows.append(row)
    write_csv(root / CSV_SWEEP, rows)
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(12, 4.5))
    for name, label, color, ls in SERIES:
        for ax, key in ((ax1, "violating_fraction"), (ax2, "helpfulness")):
            v = values(name, key)
            ax.plot(xs, v.mean(axis=0), ls, color=color, label=label)
            for row in v:
                ax.plot(xs, row, "o", color=color, ms=2.5, alpha=0.6)
    ax1.axhline(0.10, color="tab:red", lw=0.7, alpha=0.5)
    ax1.axhline(0.03, color="tab:blue", lw=0.7, alpha=0.5)
    ax1.set_xlabel("share f of harmful prompts")
    ax1.set_ylabel("share of prompts with expected cost > budget")
    ax1.set_title(f"violating prompts: mean over {len(seeds)} seeds, dots per seed (lines: 10% and 3% checks)")
    ax2.set_xlabel("share f of harmful prompts")
    ax2.set_ylabel("helpfulness (gain over the uniform reference)")
    ax2.set_title("helpfulness")
    ax2.legend(fontsize=7)
    save_png(fig, root / PLOT_SWEEP)

    key = fraction_key(primary)
    first = seeds[0]
    harmful = arrays[f"{first}__{key}__harmful"]
    budget = train["budget"]
    fig, axes = new_figure(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, name, title in ((axes[0], "baseline_exact", "baseline (expected constraint)"),
                            (axes[1], "repo_exact", "RePO (rectified per-prompt constraint)")):
        jc = arrays[f"{first}__{key}__{name}__cost"]
        order = np.argsort(jc)
        ranks = np.arange(jc.size)
        ax.scatter(ranks[~harmful[order]], jc[order][~harmful[order]], s=9, color="tab:green", label="benign prompt")
        ax.scatter(ranks[harmful[order]], jc[order][harmful[order]], s=9, color="tab:red", label="harmful prompt")
        ax.axhline(budget, color="k", lw=0.8)
        ax.axhline(float(np.mean(jc)), color="tab:purple", lw=0.8, ls="--", label="average (expected constraint)")
        ax.set_title(f"{title}: {np.mean(violates(jc, budget)):.1%} of prompts violate")
        ax.set_xlabel("prompts, sorted by expected cost")
    axes[0].set_ylabel(f"expected cost J_c(x) at f = {key}, seed {first} (budget {budget:g})")
    axes[0].legend(fontsize=7)
    save_png(fig, root / PLOT_COMP)

    rows = []
    fig, axes = new_figure(1, 3, figsize=(15, 4.2))
    trained = [x for x in SERIES if x[0] in curves[first][key]]
    for name, label, color, ls in trained:
        c = curves[first][key][name]
        for i, step in enumerate(c["step"]):
            rows.append({"policy": name, "step": step, "lambda": c["lambda"][i], "avg_cost": c["avg_cost"][i],
                         "violating_fraction": c["violating_fraction"][i], "helpfulness": c["helpfulness"][i]})
        for ax, k in zip(axes, ("lambda", "avg_cost", "violating_fraction")):
            ax.plot(c["step"], c[k], ls, color=color, label=label)
    for ax, k in zip(axes, ("multiplier lambda", "average expected cost", "share of violating prompts")):
        ax.set_xlabel("update")
        ax.set_title(f"{k} (seed {first})")
    axes[0].set_yscale("log")
    axes[1].axhline(budget, color="k", lw=0.7)
    axes[2].legend(fontsize=7)
    write_csv(root / CSV_CURVES, rows)
    save_png(fig, root / PLOT_CURVES)


def main() -> None:
    with stage("repo_safety", "evaluate", RepoSafetyParams) as ctx:
        import numpy as np

        from stages.common.io import write_json

        primary = ctx.params.evaluate.primary_fraction
        train = json.loads(ctx.path(TRAIN_METRICS).read_text())
        prep = json.loads(ctx.path(PREPARE_METRICS).read_text())
        curves = json.loads(ctx.path(CURVES).read_text())
        arrays = dict(np.load(ctx.path(POLICIES)))
        seeds = [str(s) for s in ctx.seeds]
        if sorted(train.get("per_seed", {})) != sorted(seeds):
            fail(f"train.json holds seeds {sorted(train.get('per_seed', {}))}, the profile's verdict seeds are "
                 f"{seeds}; run `dvc repro stages/repo_safety/dvc.yaml:repo_safety-train`")
        if fraction_key(primary) not in train["per_seed"][seeds[0]]["instances"]:
            fail(f"evaluate.primary_fraction={primary} was not trained (trained: "
                 f"{sorted(train['per_seed'][seeds[0]]['instances'])}); run `dvc repro stages/repo_safety/dvc.yaml:repo_safety-train`")
        metrics = seed_metrics(train, prep, primary)
        write_json(ctx.path(METRICS), metrics)
        plots(train, curves, arrays, primary, ctx.root)
        for s in seeds:
            e = metrics["per_seed"][s]["exact"]
            print(f"seed {s}, f={primary:g}: baseline cost excess {e['baseline']['cost_excess']:.2e}, violating "
                  f"{e['baseline']['violating_fraction']:.3f}; RePO violating {e['repo']['violating_fraction']:.3f} "
                  f"(baseline with margin {e['baseline_margin']['violating_fraction']:.3f}), helpfulness "
                  f"{e['helpfulness_ratio']:.3f} of the baseline's (tightened expected constraint "
                  f"{e['tightened']['helpfulness_ratio']:.3f}), {e['ratio_to_optimum']:.3f} of the per-prompt "
                  f"optimum's", flush=True)


if __name__ == "__main__":
    main()
