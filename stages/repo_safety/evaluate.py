"""repo_safety evaluate: the figures the claims read, the sweep over f, and the plots.

At the primary f (``evaluate.primary_fraction``), for exact and for sampled gradients: the
baseline's average cost above the budget and its share of violating prompts, RePO's share of
violating prompts, RePO's helpfulness over the baseline's and over the per-prompt LP optimum's.
The data checks (lambda* > 0, correlation in range, rejected draws) come from prepare.json. The
sweep over f is context: the same figures for every f.

Outputs: reports/repo_safety/metrics.json, sweep.png/.csv (violating share and helpfulness vs f
for baseline, RePO and the optimum), compensation.png (every prompt's expected cost under the
baseline and RePO at the primary f), curves.png/.csv (training curves at the primary f).
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
          ("baseline_sampled", "baseline, sampled gradients", "tab:red", ":"),
          ("repo_sampled", "RePO, sampled gradients", "tab:blue", ":"),
          ("optimum_lp", "per-prompt optimum (LP, HiGHS, no KL)", "k", "--"),
          ("optimum_kl_margin", "per-prompt optimum with KL, budget - margin", "tab:gray", "-."))


def mode_figures(inst: dict, mode: str, budget: float) -> dict:
    """The claim figures of one instance for exact or sampled gradients."""
    b, r, o = inst[f"baseline_{mode}"], inst[f"repo_{mode}"], inst["optimum_lp"]
    return {"baseline": dict(b, cost_excess=b["avg_cost"] - budget), "repo": dict(r),
            "helpfulness_ratio": r["helpfulness"] / b["helpfulness"],
            "ratio_to_optimum": r["helpfulness"] / o["helpfulness"]}


def claim_figures(train: dict, prep: dict, primary: float) -> dict:
    key = fraction_key(primary)
    budget = train["budget"]
    inst = train["instances"][key]
    info = prep["instances"][key]
    out: dict = {"primary_fraction": primary, "budget": budget, "beta": train["beta"], "margin": train["margin"],
                 "data": {"lambda_star": info["lambda_star"], "correlation": info["correlation"],
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
    sweep["optimum_helpfulness"] = [train["instances"][f]["optimum_lp"]["helpfulness"] for f in fr]
    out["sweep"] = sweep
    return out


def plots(train: dict, curves: dict, arrays, primary: float, root) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png, write_csv

    from .policy import violates

    fr = sorted(train["instances"], key=float)
    xs = [float(f) for f in fr]
    rows = []
    for f in fr:
        for name, *_ in SERIES:
            s = train["instances"][f][name]
            rows.append({"fraction": float(f), "policy": name, "violating_fraction": s["violating_fraction"],
                         "helpfulness": s["helpfulness"], "avg_cost": s["avg_cost"]})
    write_csv(root / CSV_SWEEP, rows)
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(12, 4.5))
    for name, label, color, ls in SERIES:
        v = [train["instances"][f][name]["violating_fraction"] for f in fr]
        h = [train["instances"][f][name]["helpfulness"] for f in fr]
        ax1.plot(xs, v, ls, color=color, marker="o", label=label)
        ax2.plot(xs, h, ls, color=color, marker="o", label=label)
    ax1.axhline(0.10, color="tab:red", lw=0.7, alpha=0.5)
    ax1.axhline(0.03, color="tab:blue", lw=0.7, alpha=0.5)
    ax1.set_xlabel("share f of harmful prompts")
    ax1.set_ylabel("share of prompts with expected cost > budget")
    ax1.set_title("violating prompts (lines: 10% and 3% checks)")
    ax2.set_xlabel("share f of harmful prompts")
    ax2.set_ylabel("helpfulness (gain over the uniform reference)")
    ax2.set_title("helpfulness")
    ax2.legend(fontsize=7)
    save_png(fig, root / PLOT_SWEEP)

    key = fraction_key(primary)
    harmful = arrays[f"{key}__harmful"]
    budget = train["budget"]
    fig, axes = new_figure(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, name, title in ((axes[0], "baseline_exact", "baseline (expected constraint)"),
                            (axes[1], "repo_exact", "RePO (rectified per-prompt constraint)")):
        jc = arrays[f"{key}__{name}__cost"]
        order = np.argsort(jc)
        ranks = np.arange(jc.size)
        ax.scatter(ranks[~harmful[order]], jc[order][~harmful[order]], s=9, color="tab:green", label="benign prompt")
        ax.scatter(ranks[harmful[order]], jc[order][harmful[order]], s=9, color="tab:red", label="harmful prompt")
        ax.axhline(budget, color="k", lw=0.8)
        ax.axhline(float(np.mean(jc)), color="tab:purple", lw=0.8, ls="--", label="average (expected constraint)")
        ax.set_title(f"{title}: {np.mean(violates(jc, budget)):.1%} of prompts violate")
        ax.set_xlabel("prompts, sorted by expected cost")
    axes[0].set_ylabel(f"expected cost J_c(x) at f = {key} (budget {budget:g})")
    axes[0].legend(fontsize=7)
    save_png(fig, root / PLOT_COMP)

    rows = []
    fig, axes = new_figure(1, 3, figsize=(15, 4.2))
    for name, label, color, ls in SERIES[:4]:
        c = curves[key][name]
        for i, step in enumerate(c["step"]):
            rows.append({"policy": name, "step": step, "lambda": c["lambda"][i], "avg_cost": c["avg_cost"][i],
                         "violating_fraction": c["violating_fraction"][i], "helpfulness": c["helpfulness"][i]})
        for ax, k in zip(axes, ("lambda", "avg_cost", "violating_fraction")):
            ax.plot(c["step"], c[k], ls, color=color, label=label)
    for ax, k in zip(axes, ("multiplier lambda", "average expected cost", "share of violating prompts")):
        ax.set_xlabel("update")
        ax.set_title(k)
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
        if fraction_key(primary) not in train["instances"]:
            fail(f"evaluate.primary_fraction={primary} was not trained (trained: "
                 f"{sorted(train['instances'])}); run `dvc repro stages/repo_safety/dvc.yaml:repo_safety-train`")
        metrics = claim_figures(train, prep, primary)
        write_json(ctx.path(METRICS), metrics)
        plots(train, curves, arrays, primary, ctx.root)
        e = metrics["exact"]
        print(f"f={primary:g}: baseline cost excess {e['baseline']['cost_excess']:.2e}, violating "
              f"{e['baseline']['violating_fraction']:.3f}; RePO violating {e['repo']['violating_fraction']:.3f}, "
              f"helpfulness {e['helpfulness_ratio']:.3f} of the baseline's, {e['ratio_to_optimum']:.3f} of the "
              f"per-prompt optimum's", flush=True)


if __name__ == "__main__":
    main()
