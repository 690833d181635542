"""autosep evaluate: for every verdict seed (``ctx.seeds``), every method's test accuracy, the
claims' figures, the control arms, and the plots.

Per seed (experiment.evaluate_seed): for each setting of experiment.settings (main and the control
settings), repeat and group, the test accuracy of each searched prompt, of zero-shot, the generic
description, majority vote, k-means and a random prompt, and Spearman's rho between the instance
score and the test accuracy over random prompts + generic + AutoSEP; figures are means over the
groups and repeats. Under ``controls`` the arms without AutoSEP's contribution, figured as the
musts figure AutoSEP (``generic_arm``, ``random_score_arm``, ``blind_score``).
Outputs: reports/autosep/metrics.json (``per_seed`` beside the mean over seeds),
accuracy.png/.csv (main setting, one bar per method: mean over seeds, dots per seed) and
controls.png/.csv (each must figure for AutoSEP and for its control arm, per seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .params import PARAMS
from .paths import DATASET, METRICS, PROMPTS

# must figure -> the control arm (under ``controls``) that figures it without AutoSEP's contribution
MUST_CONTROL = {"gain_best_baseline_pp": "random_score_arm", "gain_zero_shot_pp": "generic_arm",
                "gain_generic_pp": "random_score_arm", "gain_random_score_pp": "blind_score", "rho": "blind_score"}
ORDER = ["zero_shot", "generic", "majority_vote", "kmeans", "random_prompt", "opt_random_labels",
         "opt_majority_vote", "random_score", "autosep", "true_label"]


def plots(per_seed: dict, root) -> None:
    """accuracy.png/.csv (per method, mean over seeds and each seed) and controls.png/.csv."""
    import numpy as np

    from stages.common.plots import new_figure, save_png, write_csv

    from .paths import CONTROLS_DATA, CONTROLS_PLOT, PLOT, PLOT_DATA

    seeds = list(per_seed)
    rows = []
    for m in ORDER:
        v = [per_seed[s]["accuracy"][m] for s in seeds]
        rows.append({"method": m, "accuracy": float(np.mean(v)), "seed_min": float(min(v)), "seed_max": float(max(v)),
                     "seeds": len(v)})
    write_csv(root / PLOT_DATA, rows)
    fig, ax = new_figure(figsize=(8, 3.6))
    colors = ["tab:red" if m == "autosep" else "tab:grey" if m == "true_label" else "tab:blue" for m in ORDER]
    ax.bar(range(len(ORDER)), [r["accuracy"] for r in rows], color=colors, alpha=0.7)
    for i, m in enumerate(ORDER):
        ax.plot([i] * len(seeds), [per_seed[s]["accuracy"][m] for s in seeds], "k.", ms=4)
    ax.set_xticks(range(len(ORDER)), ORDER, rotation=35, ha="right")
    lo = min(r["seed_min"] for r in rows)
    ax.set(ylim=(max(0.0, lo - 0.05), 1.0), ylabel="test accuracy (bar: mean over seeds; dots: seeds)",
           title=f"autosep stand-in: methods on 8x8 digit groups ({len(seeds)} seeds)")
    save_png(fig, root / PLOT)

    crow = []
    for key, arm in MUST_CONTROL.items():
        for s in seeds:
            crow.append({"check": key, "arm": "autosep", "seed": s, "value": float(per_seed[s][key])})
            crow.append({"check": key, "arm": arm, "seed": s, "value": float(per_seed[s]["controls"][arm][key])})
    write_csv(root / CONTROLS_DATA, crow)
    fig, axes = new_figure(1, len(MUST_CONTROL), figsize=(13, 3.2))
    for ax, (key, arm) in zip(axes, MUST_CONTROL.items()):
        for i, who in enumerate(("autosep", arm)):
            v = [r["value"] for r in crow if r["check"] == key and r["arm"] == who]
            ax.bar([i], [float(np.mean(v))], color="tab:red" if i == 0 else "tab:grey", alpha=0.7)
            ax.plot([i] * len(v), v, "k.", ms=4)
        ax.set_xticks([0, 1], ["autosep", arm], fontsize=8)
        ax.set_title(key, fontsize=9)
    fig.suptitle("must figures: AutoSEP vs its control arm (bars: mean over seeds; dots: seeds)", fontsize=10)
    save_png(fig, root / CONTROLS_PLOT)


def main() -> None:
    with stage("autosep", "evaluate", PARAMS) as ctx:
        import json
        import time

        import numpy as np

        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .data import seed_split
        from .experiment import evaluate_seed
        from .sim import GROUPS

        p, e = ctx.params.train, ctx.params.evaluate
        d = np.load(ctx.path(DATASET))
        x, y = d["x"], d["y"]
        found = json.loads(ctx.path(PROMPTS).read_text())
        missing = [s for s in ctx.seeds if str(s) not in found]
        if missing:
            fail(f"{PROMPTS} lacks the seeds {missing}; re-run `dvc repro stages/autosep/dvc.yaml:autosep-train`")
        last = [time.perf_counter()]

        def one(seed: int) -> dict:
            def progress(setting: str, r: int) -> None:
                if time.perf_counter() - last[0] >= 5:
                    print(f"    seed {seed} {setting}: repeat {r + 1} evaluated", flush=True)
                    last[0] = time.perf_counter()
            try:
                return evaluate_seed(x, y, seed_split(d, seed), found[str(seed)], p, e.n_random, seed, progress)
            except KeyError as exc:
                fail(f"{exc.args[0]}; re-run `dvc repro stages/autosep/dvc.yaml:autosep-train`")

        per_seed = run_seeds(ctx.seeds, one, "seed")
        write_json(ctx.path(METRICS), per_seed_metrics(per_seed, repeats=int(d["unlabelled"].shape[1]),
                                                       groups=[list(g) for g in GROUPS]))
        plots(per_seed, ctx.root)
        for s, m in per_seed.items():
            print(f"  seed {s}: " + ", ".join(f"{k} {m[k]:+.2f} (control {m['controls'][c][k]:+.2f})"
                                              for k, c in MUST_CONTROL.items())
                  + f", gap_true_label_pp {m['gap_true_label_pp']:+.2f} (best baseline {m['best_baseline']})", flush=True)


if __name__ == "__main__":
    main()
