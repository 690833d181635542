"""jsp_multipolicy evaluate: for every verdict seed, gaps to CP-SAT on its own test shops of every
set for the trained arms (single, multi, blind; L2D on the 10x10 job and flow shops, the must's
two variants), the untrained networks the single and multi-policy arms start from, and the rules
SPT / MWKR / MOPNR. Every network takes the best of ``evaluate.samples`` sampled schedules per
shop (split evenly over a multi-policy network's K policies), the same noise seed for every arm at
a seed and set; L2D also greedily (its own test rule; context).

Outputs: reports/jsp_multipolicy/metrics.json (per seed: each method's mean gap per set and the
figures the claims read, stages.common.seeds.per_seed_metrics; beside them the mean over the
seeds), reports/jsp_multipolicy/gaps.png (mean gap per set and method over the seeds, each seed a
dot) and its table reports/jsp_multipolicy/gaps.csv.
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .params import PARAMS
from .paths import METRICS, MODELS, PLOT, PLOT_DATA, TEST_SET

METHODS = ("single", "multi", "blind", "l2d", "untrained_single", "untrained_multi", "SPT", "MWKR", "MOPNR")


def main() -> None:
    with stage("jsp_multipolicy", "evaluate", PARAMS) as ctx:
        import time

        import numpy as np

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics

        from .experiment import KEY, figures, gaps, untrained
        from .jsp import SETS
        from .store import load_models

        limit_threads(1)
        device = select_device(ctx.common.device)
        seeds = ctx.seeds
        data = np.load(ctx.path(TEST_SET))
        tests = {s: {k.split("|", 1)[1]: data[k] for k in data.files if k.startswith(f"{s}|")} for s in seeds}
        nets, trained_seeds = load_models(ctx.path(MODELS), device)
        missing = [s for s in seeds if not tests[s] or s not in trained_seeds]
        if missing or trained_seeds != list(seeds):
            fail(f"test.npz / models.pt do not hold the verdict seeds {seeds} (models.pt: {trained_seeds}; "
                 f"missing {missing}); run `dvc repro stages/jsp_multipolicy/dvc.yaml`")
        nets |= untrained(seeds, ctx.params.train)
        t0 = time.process_time()
        per_shop = {s: {} for s in seeds}
        for name in SETS:                       # one set at a time, for progress lines
            part = gaps(tests, nets, seeds, ctx.params.evaluate.samples, sets=(name,), device=device)
            for s in seeds:
                per_shop[s] |= part[s]
            print(f"  {name}: {len(seeds)} seeds, {time.process_time() - t0:.1f} s CPU so far", flush=True)
        per_seed = figures(per_shop, tests, ctx.params.evaluate.ci_level)
        for name in SETS:
            k = KEY[name]
            shown = [m for m in ("single", "multi", "blind", "l2d") if m in per_seed[seeds[0]][k]]
            print(f"  {k}: mean over seeds " + ", ".join(
                f"{m} {np.mean([per_seed[s][k][m] for s in seeds]):.2f}%" for m in shown), flush=True)
        write_json(ctx.path(METRICS), per_seed_metrics(per_seed))
        rows = []
        for name in SETS:
            k = KEY[name]
            for m in METHODS:
                if m in per_seed[seeds[0]][k]:
                    v = np.array([per_seed[s][k][m] for s in seeds])
                    rows += [{"test_set": name, "method": m, "gap_pct": float(v.mean()),
                              "sd_over_seeds": float(v.std(ddof=1)) if len(v) > 1 else 0.0,
                              **{f"seed_{s}": float(x) for s, x in zip(seeds, v)}}]
        write_csv(ctx.path(PLOT_DATA), rows)
        methods = [m for m in METHODS if any(r["method"] == m for r in rows)]
        fig, ax = new_figure(figsize=(8, 3.8))
        w = 0.8 / len(methods)
        for j, meth in enumerate(methods):
            for i, name in enumerate(SETS):
                r = next((r for r in rows if r["test_set"] == name and r["method"] == meth), None)
                if r is None:
                    continue
                x = i + j * w
                ax.bar(x, r["gap_pct"], w, color=f"C{j}", label=meth if i == 0 else None)
                ax.plot([x] * len(seeds), [r[f"seed_{s}"] for s in seeds], "k.", ms=2)
        ax.set(xticks=np.arange(len(SETS)) + 0.4 - w / 2, xticklabels=["10x10", "15x15", "flow 10x10"],
               ylabel="gap to CP-SAT (%)", yscale="symlog",
               title=f"jsp_multipolicy: mean gap over seeds {seeds} (dots: seeds), best of samples")
        ax.legend(fontsize=6, ncol=3)
        save_png(fig, ctx.path(PLOT))


if __name__ == "__main__":
    main()
