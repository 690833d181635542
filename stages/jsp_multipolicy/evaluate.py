"""jsp_multipolicy evaluate: gaps to CP-SAT on every test set for the single policy, the
multi-policy network (both: best of evaluate.samples sampled schedules, split evenly over the
multi-policy's K policies, on ``common.device``) and the rules SPT / MWKR / MOPNR; paired
per-instance intervals.

Outputs: reports/jsp_multipolicy/metrics.json (what claims.yaml checks),
reports/jsp_multipolicy/gaps.png and its table reports/jsp_multipolicy/gaps.csv.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import METRICS, MODELS, PLOT, PLOT_DATA, TEST_SET


def main() -> None:
    with stage("jsp_multipolicy", "evaluate", PARAMS) as ctx:
        import numpy as np

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.stats import t_interval

        from .jsp import RULES, SETS, rule_makespans
        from .policy import best_of
        from .store import load_nets

        limit_threads(1)
        data = np.load(ctx.path(TEST_SET))
        nets = load_nets(ctx.path(MODELS), select_device(ctx.common.device))
        e = ctx.params.evaluate
        metrics, rows = {}, []
        for i, key in enumerate(SETS):
            M, D, ref = data[f"{key}_machines"], data[f"{key}_durations"], data[f"{key}_ref"]
            gaps = {}
            for name, net in nets.items():
                best, _ = best_of(net, M, D, e.samples, seed=ctx.seed * 1000 + i)
                gaps[name] = 100 * (best / ref - 1)
            for r in RULES:
                gaps[r] = 100 * (rule_makespans(M, D, r) / ref - 1)
            diff = gaps["multi"] - gaps["single"]
            ci = t_interval(diff, e.ci_level)
            best_rule = min(RULES, key=lambda r: gaps[r].mean())
            m = {name: float(g.mean()) for name, g in gaps.items()}
            m |= {"multi_minus_single": ci["mean"], "multi_minus_single_ci_low": ci["low"],
                  "multi_minus_single_ci_high": ci["high"], "multi_wins": int((diff < 0).sum()),
                  "single_wins": int((diff > 0).sum()), "best_rule": best_rule,
                  "worst_learned_minus_best_rule": max(m["multi"], m["single"]) - m[best_rule],
                  "cpsat_optimal_fraction": float(np.mean(data[f"{key}_optimal"])), "instances": len(ref)}
            metrics[f"gap{key[1:] if key != 'flow' else 'flow'}"] = m
            rows += [{"test_set": key, "method": name, "gap_pct": float(g.mean()),
                      "sem": float(g.std(ddof=1) / np.sqrt(len(g)))} for name, g in gaps.items()]
            print(f"  {key}: single {m['single']:.2f}%  multi {m['multi']:.2f}%  best rule {best_rule} "
                  f"{m[best_rule]:.2f}%  multi-single {ci['mean']:+.2f} [{ci['low']:+.2f}, {ci['high']:+.2f}]",
                  flush=True)
        write_json(ctx.path(METRICS), metrics)
        write_csv(ctx.path(PLOT_DATA), rows)
        methods = ["single", "multi", *RULES]
        fig, ax = new_figure(figsize=(7, 3.5))
        w = 0.8 / len(methods)
        for j, meth in enumerate(methods):
            vals = [next(r for r in rows if r["test_set"] == s and r["method"] == meth) for s in SETS]
            ax.bar(np.arange(len(SETS)) + j * w, [v["gap_pct"] for v in vals], w,
                   yerr=[v["sem"] for v in vals], label=meth)
        ax.set(xticks=np.arange(len(SETS)) + 0.4 - w / 2, xticklabels=["10x10", "15x15", "flow 10x10"],
               ylabel="gap to CP-SAT (%)", yscale="log", title="jsp_multipolicy: mean gap (best of samples)")
        ax.legend(fontsize=7)
        save_png(fig, ctx.path(PLOT))


if __name__ == "__main__":
    main()
