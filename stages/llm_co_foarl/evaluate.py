"""llm_co_foarl evaluate: the three models on the held-out instances, decoded without a mask.

Each model (SFT only, SFT + FOARL, SFT + equal-compute SFT control) writes a solution for every test
instance greedily, once sampled (T = 1) and as best of ``samples`` samples. Per model, problem and
decode: the feasible rate, the mean optimality gap to the OR-Tools optimum over feasible solutions
(as the official evaluation averages it) and the mean gap with infeasible solutions counted as 100%.
Outputs: reports/llm_co_foarl/metrics.json (what claims.yaml checks), feasible_gap.png/.csv and
foarl_curve.png/.csv.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import CURVE_DATA, CURVE_PLOT, DATASET, METRICS, MODELS, PLOT, PLOT_DATA, TRAIN_METRICS

MODEL_NAMES = ("sft", "foarl", "sft_more")
LABELS = {"sft": "SFT only", "foarl": "SFT + FOARL", "sft_more": "SFT + more SFT (equal updates)"}
DECODES = ("greedy", "sample", "best_of")


def claim_figures(res: dict, problems) -> dict:
    """The figures claims.yaml reads. Pooled checks average the two single-solution decodings
    (greedy and one sample at T = 1) over both problems; per-problem figures are greedy. Gaps in %."""
    c = {}
    single = ("greedy", "sample")

    def mean_over(fn):
        return sum(fn(p, d) for p in problems for d in single) / (len(problems) * len(single))

    def g(model, p, d, key):
        return res[model][p][d][key]

    c["feasible_gain_mean"] = mean_over(lambda p, d: g("foarl", p, d, "feasible_rate") - g("sft", p, d, "feasible_rate"))
    c["gap_drop_mean_pct"] = mean_over(lambda p, d: 100 * (g("sft", p, d, "gap_feasible") - g("foarl", p, d, "gap_feasible")))
    c["gap_all_drop_mean_pct"] = mean_over(lambda p, d: 100 * (g("sft", p, d, "gap_all") - g("foarl", p, d, "gap_all")))
    c["feasible_gain_vs_control_mean"] = mean_over(
        lambda p, d: g("foarl", p, d, "feasible_rate") - g("sft_more", p, d, "feasible_rate"))
    c["gap_all_drop_vs_control_mean_pct"] = mean_over(
        lambda p, d: 100 * (g("sft_more", p, d, "gap_all") - g("foarl", p, d, "gap_all")))
    c["control_feasible_gain_mean"] = mean_over(
        lambda p, d: g("sft_more", p, d, "feasible_rate") - g("sft", p, d, "feasible_rate"))
    c["control_gap_drop_mean_pct"] = mean_over(
        lambda p, d: 100 * (g("sft", p, d, "gap_feasible") - g("sft_more", p, d, "gap_feasible")))
    for p in problems:
        s_, r = res["sft"][p]["greedy"], res["foarl"][p]["greedy"]
        c[f"feasible_gain_{p}"] = r["feasible_rate"] - s_["feasible_rate"]
        c[f"gap_drop_{p}_pct"] = 100 * (s_["gap_feasible"] - r["gap_feasible"])
        c[f"gap_all_drop_{p}_pct"] = 100 * (s_["gap_all"] - r["gap_all"])
        c[f"foarl_gap_{p}_pct"] = 100 * r["gap_feasible"]
        c[f"foarl_feasible_{p}"] = r["feasible_rate"]
        c[f"foarl_best_of_gap_{p}_pct"] = 100 * res["foarl"][p]["best_of"]["gap_feasible"]
        c[f"foarl_best_of_feasible_{p}"] = res["foarl"][p]["best_of"]["feasible_rate"]
    return c


def no_nan(obj):
    """NaN (no feasible solution to average) as null, so the metrics file is strict JSON."""
    if isinstance(obj, dict):
        return {k: no_nan(v) for k, v in obj.items()}
    if isinstance(obj, float) and obj != obj:
        return None
    return obj


def main() -> None:
    with stage("llm_co_foarl", "evaluate", PARAMS) as ctx:
        import json

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        from . import core
        from .store import load_model

        limit_threads(default=1)
        data = json.loads(ctx.path(DATASET).read_text())
        device = select_device(ctx.common.device)
        n = ctx.params.evaluate.samples
        res = {}
        for name in MODEL_NAMES:
            model, _ = load_model(ctx.path(MODELS) / f"{name}.pt", ctx.path(MODELS) / "config.json")
            model = model.to(device)
            res[name] = {}
            for prob, d in data.items():
                size = len(d["test"][0]["pts"]) if prob == "tsp" else len(d["test"][0]["items"])
                res[name][prob] = core.evaluate(model, d["test"], prob, size, n, ctx.seed, device=device)
                g = res[name][prob]["greedy"]
                print(f"  {name:8s} {prob}: greedy feasible {g['feasible_rate']:.3f}, gap (feasible) "
                      f"{100 * g['gap_feasible']:.2f}%, gap (infeasible = 100%) {100 * g['gap_all']:.2f}%", flush=True)
        claim = claim_figures(res, list(data))
        import numpy as np

        from .ladder import heuristic_gaps

        ladder = {}
        for k, (prob, d) in enumerate(data.items()):
            ladder[prob] = {**{f"{key}_gap_pct": 100 * v for key, v in
                               heuristic_gaps(prob, d["test"], np.random.default_rng([ctx.seed, 20, k])).items()},
                            **{f"{m}_greedy_gap_pct": 100 * res[m][prob]["greedy"]["gap_feasible"] for m in MODEL_NAMES},
                            **{f"{m}_greedy_feasible": res[m][prob]["greedy"]["feasible_rate"] for m in MODEL_NAMES}}
            print(f"  ladder {prob}: " + ", ".join(f"{k_} {v:.3g}" for k_, v in ladder[prob].items()), flush=True)
        write_json(ctx.path(METRICS), no_nan({"claim": claim, "ladder": ladder, "results": res, "samples": n,
                                              "n_test": {p: len(d["test"]) for p, d in data.items()}}))
        rows = [{"case": f"{p.upper()} {dec}",
                 **{f"feasible_{m}": res[m][p][dec]["feasible_rate"] for m in MODEL_NAMES},
                 **{f"gap_pct_{m}": 100 * res[m][p][dec]["gap_feasible"] for m in MODEL_NAMES},
                 **{f"gap_all_pct_{m}": 100 * res[m][p][dec]["gap_all"] for m in MODEL_NAMES}}
                for p in data for dec in DECODES]
        write_csv(ctx.path(PLOT_DATA), rows)

        fig, axes = new_figure(1, 2, figsize=(9, 3.6))
        width = 0.27
        for ax, key, title in ((axes[0], "feasible_rate", "feasible rate (greedy, no mask)"),
                               (axes[1], "gap_feasible", "optimality gap on feasible, % (greedy)")):
            for i, m in enumerate(MODEL_NAMES):
                vals = [res[m][p]["greedy"][key] * (100 if key != "feasible_rate" else 1) for p in data]
                ax.bar([j + (i - 1) * width for j in range(len(data))], vals, width, label=LABELS[m])
            ax.set_xticks(range(len(data)), [f"{p.upper()}" for p in data])
            ax.set_title(title, fontsize=9)
        axes[0].legend(fontsize=7)
        save_png(fig, ctx.path(PLOT))

        curve = json.loads(ctx.path(TRAIN_METRICS).read_text())["foarl_curve"]
        write_csv(ctx.path(CURVE_DATA), curve)
        fig, ax = new_figure(figsize=(5, 3.5))
        for prob in data:
            pts = [r for r in curve if r["problem"] == prob]
            ax.plot([r["step"] for r in pts], [r["feasible"] for r in pts], label=f"{prob.upper()} sampled feasible rate")
            ax.plot([r["step"] for r in pts], [r["reward"] / 2 for r in pts], "--", label=f"{prob.upper()} reward / 2")
        ax.set(xlabel="FOARL step", ylabel="rate", title="FOARL training (group samples, T = 1)")
        ax.legend(fontsize=7)
        save_png(fig, ctx.path(CURVE_PLOT))


if __name__ == "__main__":
    main()
