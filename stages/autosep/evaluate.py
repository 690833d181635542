"""autosep evaluate: every method's test accuracy, the claims' figures, the controls, and the plots.

For each setting of experiment.settings (main and the three controls), repeat and group: the test
accuracy of each searched prompt, of zero-shot, the generic description, majority vote, k-means and
a random prompt, and Spearman's rho between the instance score and the test accuracy over random
prompts + generic + AutoSEP. Figures are means over groups and repeats; the intervals are
Student-t over the repeats (each repeat's mean over the four groups).
Outputs: reports/autosep/metrics.json, accuracy.png/.csv (main setting, one bar per method) and
controls.png/.csv (each must check in the main setting and in the control where it should fail).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .params import PARAMS
from .paths import CONTROLS_DATA, CONTROLS_PLOT, DATASET, METRICS, PLOT, PLOT_DATA, PROMPTS

# must check -> (metric in a setting, threshold, the control in which it should fail)
MUST = {"gain_zero_shot_pp": (8.0, "finer_look"), "gain_generic_pp": (3.0, "strong_generic"),
        "gain_random_score_pp": (2.0, "blind_score"), "rho": (0.3, "blind_score")}


def gains(acc: dict, rho: float, unsupervised) -> dict:
    """The claims' figures from one setting's accuracies (fractions): gains in percentage points."""
    out = {"rho": rho}
    a = acc["autosep"]
    for ref, key in (("zero_shot", "gain_zero_shot_pp"), ("generic", "gain_generic_pp"),
                     ("random_score", "gain_random_score_pp"), ("true_label", "gap_true_label_pp")):
        if ref in acc:
            out[key] = 100 * (a - acc[ref])
    present = [m for m in unsupervised if m in acc]
    best = max(present, key=lambda m: acc[m])
    out["best_baseline"], out["gain_best_baseline_pp"] = best, 100 * (a - acc[best])
    return out


def main() -> None:
    with stage("autosep", "evaluate", PARAMS) as ctx:
        import json

        import numpy as np
        from tqdm import tqdm

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.stats import t_interval

        from .experiment import UNSUPERVISED, Search, evaluate_group, group_seed, settings
        from .sim import GROUPS, Blackbox, prototypes

        p, e = ctx.params.train, ctx.params.evaluate
        d = np.load(ctx.path(DATASET))
        x, y, unl, test = d["x"], d["y"], d["unlabelled"], d["test"]
        found = json.loads(ctx.path(PROMPTS).read_text())
        protos = prototypes(x[d["pretrain"]], y[d["pretrain"]])
        s = Search(**p.search.model_dump())
        metrics: dict = {"groups": [list(g) for g in GROUPS], "repeats": int(unl.shape[0])}
        for name, (bb_kw, _rule, methods) in settings(p.blackbox.model_dump(), p.generic_rule,
                                                       p.ablations.finer_block, p.ablations.blind_compare_noise).items():
            if name not in found or any(m not in found[name]["prompts"] for m in methods):
                fail(f"{PROMPTS} lacks the setting {name!r} or one of its methods {methods}; re-run "
                     f"`dvc repro stages/autosep/dvc.yaml:autosep-train`")
            bb = Blackbox(protos, **bb_kw)
            gen = tuple(found[name]["generic"])
            cells = []                                   # (repeat, group) -> {"accuracy", "rho"}
            for r in tqdm(range(unl.shape[0]), desc=f"evaluate {name}", mininterval=2, disable=None):
                for g, classes in enumerate(GROUPS):
                    prompts = {m: tuple(found[name]["prompts"][m][r][g]) for m in methods}
                    cells.append((r, g, evaluate_group(bb, x[unl[r, g]], x[test[r, g]], y[test[r, g]], classes,
                                                       prompts, gen, s, group_seed(ctx.seed, r, g), e.n_random,
                                                       baselines=name == "main")))
            keys = list(cells[0][2]["accuracy"])
            acc = {k: float(np.mean([c[2]["accuracy"][k] for c in cells])) for k in keys}
            rho = float(np.mean([c[2]["rho"] for c in cells]))
            block = {"accuracy": acc, **gains(acc, rho, UNSUPERVISED)}
            # per repeat (mean over groups): the spread the intervals are drawn from
            per_rep = {k: [float(np.mean([c[2]["accuracy"][k] for c in cells if c[0] == r]))
                           for r in range(unl.shape[0])] for k in keys}
            block["per_group_gain_zero_shot_pp"] = [
                100 * float(np.mean([c[2]["accuracy"]["autosep"] - c[2]["accuracy"]["zero_shot"] for c in cells if c[1] == g]))
                for g in range(len(GROUPS))]
            if unl.shape[0] >= 2:
                block["interval"] = {k: t_interval(v, e.level) for k, v in per_rep.items()}
            block["per_repeat"] = per_rep
            metrics[name] = block
        main = metrics.pop("main")
        metrics.update({k: v for k, v in main.items()})
        metrics["controls"] = {name: metrics.pop(name) for name in ("finer_look", "strong_generic", "blind_score")}
        write_json(ctx.path(METRICS), metrics)

        # plot 1: test accuracy per method (main setting), intervals over repeats
        order = ["zero_shot", "generic", "majority_vote", "kmeans", "random_prompt", "opt_random_labels",
                 "opt_majority_vote", "random_score", "autosep", "true_label"]
        iv = main.get("interval", {})
        rows = [{"method": m, "accuracy": main["accuracy"][m], "low": iv.get(m, {}).get("low", main["accuracy"][m]),
                 "high": iv.get(m, {}).get("high", main["accuracy"][m])} for m in order]
        write_csv(ctx.path(PLOT_DATA), rows)
        fig, ax = new_figure(figsize=(8, 3.6))
        colors = ["tab:red" if r["method"] == "autosep" else "tab:grey" if r["method"] == "true_label" else "tab:blue"
                  for r in rows]
        ax.bar(range(len(rows)), [r["accuracy"] for r in rows], color=colors,
               yerr=[[r["accuracy"] - r["low"] for r in rows], [r["high"] - r["accuracy"] for r in rows]], capsize=3)
        ax.set_xticks(range(len(rows)), [r["method"] for r in rows], rotation=35, ha="right")
        lo = min(r["low"] for r in rows)
        ax.set(ylim=(max(0.0, lo - 0.05), 1.0), ylabel="test accuracy (mean of 4 groups)",
               title=f"autosep stand-in: methods on 8x8 digit groups ({unl.shape[0]} repeats, seed {ctx.seed})")
        save_png(fig, ctx.path(PLOT))

        # plot 2: each must check in the main setting and in its control
        crow = []
        for key, (thr, control) in MUST.items():
            crow.append({"check": key, "setting": "main", "value": float(main[key]), "threshold": thr})
            crow.append({"check": key, "setting": control, "value": float(metrics["controls"][control][key]), "threshold": thr})
        write_csv(ctx.path(CONTROLS_DATA), crow)
        fig, axes = new_figure(1, len(MUST), figsize=(11, 3.2))
        for ax, key in zip(axes, MUST):
            pair = [r for r in crow if r["check"] == key]
            ax.bar([0, 1], [r["value"] for r in pair], color=["tab:red", "tab:grey"])
            ax.axhline(pair[0]["threshold"], color="k", ls="--", lw=1)
            ax.set_xticks([0, 1], [r["setting"] for r in pair])
            ax.set_title(key, fontsize=9)
        fig.suptitle("must checks: main setting vs the control where each should fail (dashed: threshold)", fontsize=10)
        save_png(fig, ctx.path(CONTROLS_PLOT))
        print("  " + ", ".join(f"{k} {main[k]:+.2f}" for k in ("gain_zero_shot_pp", "gain_generic_pp", "gain_random_score_pp",
                                                               "gain_best_baseline_pp", "gap_true_label_pp", "rho"))
              + f" (best baseline {main['best_baseline']})", flush=True)
        print("  controls: " + ", ".join(f"{k} in {c}: {metrics['controls'][c][k]:+.2f}" for k, (_t, c) in MUST.items()),
              flush=True)


if __name__ == "__main__":
    main()
