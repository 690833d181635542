"""llm_co_foarl evaluate: each verdict seed's three models on the held-out instances, decoded
without a mask.

Each model (SFT only, SFT + FOARL, SFT + equal-compute SFT control) of each verdict seed writes a
solution for every test instance greedily, once sampled (T = 1) and as best of ``samples`` samples.
Per seed, model, problem and decode: the feasible rate, the mean optimality gap to the OR-Tools
optimum over feasible solutions (as the official evaluation averages it) and the mean gap with
infeasible solutions counted as 100%. Outputs: reports/llm_co_foarl/metrics.json (what claims.yaml
reads: ``per_seed`` and the mean over the seeds, stages.common.seeds.per_seed_metrics),
feasible_gap.png/.csv, foarl_curve.png/.csv and the SFT learning curve sft_curve.png/.csv.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import (CURVE_DATA, CURVE_PLOT, DATASET, METRICS, MODELS, PLOT, PLOT_DATA, SFT_CURVE_DATA,
                    SFT_CURVE_PLOT, TRAIN_METRICS, seed_dir)

LABELS = {"sft": "SFT only", "foarl": "SFT + FOARL", "sft_more": "SFT + more SFT (equal updates)"}
DECODES = ("greedy", "sample", "best_of")
RUNGS = {"random_gap_pct": "random solution", "greedy_heuristic_gap_pct": "greedy heuristic"}


def no_nan(obj):
    """NaN (no feasible solution to average) as null, so the metrics file is strict JSON."""
    if isinstance(obj, dict):
        return {k: no_nan(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [no_nan(v) for v in obj]
    if isinstance(obj, float) and obj != obj:
        return None
    return obj


def curve_rungs(data: dict, instances: int, seeds: list) -> dict:
    """The random and heuristic rungs on the learning curve's instances (the first ``instances``
    test instances of each problem): ``{seed: {problem: {key: gap %}}}``, the random solutions
    from the seed's stream 21."""
    import numpy as np

    from .ladder import heuristic_gaps

    return {s: {prob: {f"{key}_gap_pct": 100 * v for key, v in heuristic_gaps(
        prob, d["test"][:instances], np.random.default_rng([s, 21, k])).items()}
        for k, (prob, d) in enumerate(data.items())} for s in seeds}


def learning_rows(train: dict, ladder: dict, seeds: list, problems) -> list[dict]:
    """The SFT learning curve as a long table: per step and problem, the greedy gap on feasible
    solutions and the feasible rate, the mean over the seeds (gap: over the seeds with a feasible
    solution) and each seed's gap, beside the random and heuristic rungs of ``ladder``
    (:func:`curve_rungs`; flat lines)."""
    import numpy as np

    steps = [r["step"] for r in train[str(seeds[0])]["sft_curve"]]
    rows = []
    for i, step in enumerate(steps):
        for prob in problems:
            pts = [train[str(s)]["sft_curve"][i] for s in seeds]
            gaps = [r[f"{prob}_gap_pct"] for r in pts]
            ok = [g for g in gaps if g is not None and g == g]
            rows.append({"step": step, "problem": prob.upper(), "model": "SFT greedy (mean over seeds)",
                         "gap_pct": float(np.mean(ok)) if ok else "",
                         "feasible": float(np.mean([r[f"{prob}_feasible"] for r in pts])),
                         **{f"gap_pct_seed{s}": (g if g is not None and g == g else "") for s, g in zip(seeds, gaps)}})
            for key, name in RUNGS.items():
                rows.append({"step": step, "problem": prob.upper(), "model": name,
                             "gap_pct": float(np.mean([ladder[s][prob][key] for s in seeds])), "feasible": 1.0,
                             **{f"gap_pct_seed{s}": "" for s in seeds}})
    return rows


def main() -> None:
    with stage("llm_co_foarl", "evaluate", PARAMS) as ctx:
        import json

        import numpy as np

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.runtime.stage import fail
        from stages.common.seeds import per_seed_metrics, run_seeds

        from . import core
        from .store import load_model

        limit_threads(default=1)
        data = json.loads(ctx.path(DATASET).read_text())
        train = json.loads(ctx.path(TRAIN_METRICS).read_text())["per_seed"]
        device = select_device(ctx.common.device)
        n = ctx.params.evaluate.samples
        seeds = list(ctx.seeds)
        missing = [s for s in seeds if str(s) not in train]
        if missing:   # train.json of another profile's seeds
            fail(f"train.json has no models for verdict seeds {missing}; run `dvc repro stages/llm_co_foarl/dvc.yaml`")
        config = ctx.path(MODELS) / "config.json"

        def one(seed: int) -> dict:
            folder = ctx.path(seed_dir(MODELS, seed))
            models = {name: load_model(folder / f"{name}.pt", config)[0].to(device) for name in core.MODEL_NAMES}
            return core.evaluate_seed(models, data, n, seed, device=device, log=lambda m: print(m, flush=True))

        out = run_seeds(seeds, one, what="verdict seed")
        problems = list(data)
        write_json(ctx.path(METRICS), no_nan(per_seed_metrics(
            out, samples=n, n_test={p: len(d["test"]) for p, d in data.items()})))
        res = {s: out[s]["results"] for s in seeds}

        def mean(m, p, dec, key, scale=1.0):
            vals = [res[s][m][p][dec][key] for s in seeds]
            vals = [v for v in vals if v == v]
            return scale * float(np.mean(vals)) if vals else float("nan")

        rows = [{"case": f"{p.upper()} {dec}",
                 **{f"feasible_{m}": mean(m, p, dec, "feasible_rate") for m in core.MODEL_NAMES},
                 **{f"gap_pct_{m}": mean(m, p, dec, "gap_feasible", 100) for m in core.MODEL_NAMES},
                 **{f"gap_all_pct_{m}": mean(m, p, dec, "gap_all", 100) for m in core.MODEL_NAMES}}
                for p in problems for dec in DECODES]
        write_csv(ctx.path(PLOT_DATA), [{k: ("" if v != v else v) for k, v in r.items()} for r in rows])

        # the comparison: bars are the mean over the seeds, dots each seed (greedy)
        fig, axes = new_figure(1, 2, figsize=(9, 3.6))
        width = 0.27
        for ax, key, title, scale in ((axes[0], "feasible_rate", "feasible rate (greedy, no mask)", 1),
                                      (axes[1], "gap_feasible", "optimality gap on feasible, % (greedy)", 100)):
            for i, m in enumerate(core.MODEL_NAMES):
                xs = [j + (i - 1) * width for j in range(len(problems))]
                ax.bar(xs, [mean(m, p, "greedy", key, scale) for p in problems], width, label=LABELS[m])
                for x, p in zip(xs, problems):
                    ax.plot([x] * len(seeds), [scale * res[s][m][p]["greedy"][key] for s in seeds], "k.", ms=3)
            ax.set_xticks(range(len(problems)), [p.upper() for p in problems])
            ax.set_title(title, fontsize=9)
        axes[0].legend(fontsize=7)
        fig.suptitle(f"bars: mean of verdict seeds {seeds}; dots: each seed", fontsize=8)
        save_png(fig, ctx.path(PLOT))

        # FOARL training, mean over the seeds
        curve = [{"seed": s, **r} for s in seeds for r in train[str(s)]["foarl_curve"]]
        write_csv(ctx.path(CURVE_DATA), curve)
        fig, ax = new_figure(figsize=(5, 3.5))
        for prob in problems:
            steps = sorted({r["step"] for r in curve if r["problem"] == prob})
            for key, style, label, scale in (("feasible", "-", "sampled feasible rate", 1.0),
                                             ("reward", "--", "reward / 2", 0.5)):
                ys = [scale * float(np.mean([r[key] for r in curve if r["problem"] == prob and r["step"] == st]))
                      for st in steps]
                ax.plot(steps, ys, style, label=f"{prob.upper()} {label}")
        ax.set(xlabel="FOARL step", ylabel="rate", title=f"FOARL training (group samples, T = 1; mean of {len(seeds)} seeds)")
        ax.legend(fontsize=7)
        save_png(fig, ctx.path(CURVE_PLOT))

        # the SFT learning curve: greedy gap on feasible solutions against SFT steps, with the rungs
        learn = learning_rows(train, curve_rungs(data, ctx.params.train.curve_instances, seeds), seeds, problems)
        write_csv(ctx.path(SFT_CURVE_DATA), learn)
        fig, axes = new_figure(1, len(problems), figsize=(4.6 * len(problems), 3.6))
        for ax, prob in zip(np.atleast_1d(axes), problems):
            mine = [r for r in learn if r["problem"] == prob.upper()]
            sft = [r for r in mine if r["model"].startswith("SFT")]
            xs = [r["step"] for r in sft]
            for s in seeds:
                ax.plot(xs, [r[f"gap_pct_seed{s}"] if r[f"gap_pct_seed{s}"] != "" else np.nan for r in sft],
                        color="C0", alpha=0.35, lw=0.8)
            ax.plot(xs, [r["gap_pct"] if r["gap_pct"] != "" else np.nan for r in sft], color="C0", lw=2,
                    label="SFT, greedy (mean; thin: each seed)")
            for k, (key, name) in enumerate(RUNGS.items()):
                ax.axhline([r["gap_pct"] for r in mine if r["model"] == name][0], color=f"C{k + 1}", ls="--",
                           lw=1, label=name)
            ax.set(xlabel="SFT step", ylabel="gap on feasible solutions, %", yscale="log",
                   title=f"{prob.upper()}: SFT learning curve ({ctx.params.train.curve_instances} test instances)")
            ax.legend(fontsize=7)
        save_png(fig, ctx.path(SFT_CURVE_PLOT))


if __name__ == "__main__":
    main()
