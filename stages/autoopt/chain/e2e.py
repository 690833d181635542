"""autoopt e2e: image -> M1 -> M2 -> M3 -> solution, and the study's merged metrics.

On each test split (printed; handwriting-like, reported separately), on the first ``max_rows``
rows whose optimum is known (planted by the generator, or an LP/MILP solved by HiGHS in prepare),
the chain runs from three starting points, so that each step's loss can be read off:

* ``reference_pyomo``: M3 (BOBD) alone, on the dataset's own Pyomo script;
* ``ground_truth_latex``: M2 (rule-based) + M3, from the dataset's LaTeX;
* ``image``: the whole chain: M1's greedy LaTeX for the image (data/autoopt/m1_predictions.json,
  written by m1-evaluate), then M2 + M3. This is the end-to-end success rate.

A row succeeds when the chain returns a feasible point whose objective is within
``rel_tol * max(1, |optimum|)`` of the known optimum (``chain.success``). Every script is built and
solved in the sandbox (``chain.solve_scripts``).

This stage also writes reports/autoopt/metrics.json, the file claims.yaml reads: M1's figures
(m1_metrics.json) at the top level as before, and ``m2``, ``m3`` and ``e2e`` sections from
m2_metrics.json, m3_metrics.json and this stage.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from ..params import AutoOptParams
from ..paths import (DATASET, E2E_ROWS, M1_METRICS, M1_PREDICTIONS, M2_METRICS, M3_METRICS, METRICS,
                    PLOT_E2E)

EVAL_SPLITS = {"printed": "test", "handwritten": "test_handwritten"}
SOURCES = ("reference_pyomo", "ground_truth_latex", "image")
LABELS = {"reference_pyomo": "M3 on the dataset's Pyomo", "ground_truth_latex": "M2 + M3 from true LaTeX",
          "image": "M1 + M2 + M3 from the image"}


def known_rows(ds, max_rows: int) -> list[int]:
    """Indices of rows with a known optimum, in dataset order, at most max_rows (0 = all)."""
    idx = [k for k, (opt, src) in enumerate(zip(ds["optimum"], ds["optimum_source"]))
           if opt is not None and src in ("planted", "highs")]
    return idx[:max_rows] if max_rows else idx


def summarise(flags: list[bool], outcomes) -> dict:
    from collections import Counter

    n = len(flags)
    return {"rows": n, "success_rate": (sum(flags) / n) if n else None, "successes": int(sum(flags)),
            "stopped_at": dict(sorted(Counter(o.stage for o in outcomes).items())),
            "seconds": float(sum(o.seconds for o in outcomes))}


def section(path, key: str) -> dict:
    """A part's metrics file as one section of the merged metrics: the file's ``key`` entry (when
    it nests its figures under the section's name) with the file's other top-level entries beside
    them, or the whole file."""
    import json

    data = json.loads(path.read_text())
    if key not in data:
        return data
    out = dict(data[key])
    for k, v in data.items():
        if k != key:
            if k in out:
                raise ValueError(f"{path}: '{k}' is both a top-level entry and one of {key}'s")
            out[k] = v
    return out


def main() -> None:
    with stage("autoopt", "e2e", AutoOptParams) as ctx:
        import json

        import datasets
        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        from .chain import solve_scripts, success, translate_all

        ep = ctx.params.e2e
        dd = datasets.load_from_disk(str(ctx.path(DATASET)))
        preds = json.loads(ctx.path(M1_PREDICTIONS).read_text())
        results: dict = {"rows_with_known_optimum": {}, "budget": ep.budget, "rel_tol": ep.rel_tol}
        csv_rows = []
        for name, split in EVAL_SPLITS.items():
            if split not in dd or name not in preds:
                print(f"  note: no {split} split or no M1 predictions for it; its figures are null")
                continue
            ds = dd[split]
            idx = known_rows(ds, ep.max_rows)
            results["rows_with_known_optimum"][name] = {"used": len(idx), "of": len(known_rows(ds, 0)),
                                                        "split_rows": len(ds)}
            m1_latex = {p["id"]: p["latex"] for p in preds[name]}
            rows = ds.select(idx)
            optima = [float(v) for v in rows["optimum"]]
            sources = {
                "reference_pyomo": ([s for s in rows["pyomo"]], [""] * len(idx)),
                "ground_truth_latex": tuple(zip(*translate_all(rows["latex"]))) if idx else ((), ()),
                "image": tuple(zip(*translate_all([m1_latex.get(i, "") for i in rows["id"]]))) if idx else ((), ()),
            }
            results.setdefault("by_source", {})
            for source in SOURCES:
                scripts, reasons = (list(v) for v in sources[source])
                outs = solve_scripts(scripts, budget=ep.budget, seed=ctx.seed, time_limit_s=ep.time_limit_s,
                                     memory_mb=ep.memory_mb, workers=ep.workers, reasons=reasons,
                                     desc=f"{name} {source}")
                flags = [bool(success(o, opt, ep.rel_tol)) for o, opt in zip(outs, optima)]
                results["by_source"].setdefault(source, {})[name] = summarise(flags, outs)
                for rid, tags, opt, o, ok in zip(rows["id"], rows["tags"], optima, outs, flags):
                    csv_rows.append({"split": name, "source": source, "id": rid, "type": tags["type"],
                                     "optimum": opt, "stage": o.stage,
                                     "objective": o.solution.get("objective"), "success": int(ok),
                                     "seconds": round(o.seconds, 3)})
                s = results["by_source"][source][name]
                print(f"  {name:11s} {source:18s}: {s['successes']}/{s['rows']} solved to the optimum "
                      f"(stopped at: {s['stopped_at']})", flush=True)
        by = results.get("by_source", {})
        for name in EVAL_SPLITS:
            if name in by.get("image", {}):
                results.setdefault("success", {})[name] = by["image"][name]["success_rate"]
                results.setdefault("loss", {})[name] = {
                    "m2": _diff(by, "reference_pyomo", "ground_truth_latex", name),
                    "m1": _diff(by, "ground_truth_latex", "image", name)}

        merged = json.loads(ctx.path(M1_METRICS).read_text())
        merged["m2"] = section(ctx.path(M2_METRICS), "m2")
        merged["m3"] = section(ctx.path(M3_METRICS), "m3")
        merged["e2e"] = results
        write_json(ctx.path(METRICS), merged)
        write_csv(ctx.path(E2E_ROWS), csv_rows)

        fig, ax = new_figure(figsize=(7, 3.8))
        names = [n for n in EVAL_SPLITS if n in by.get("image", {})]
        w = 0.26
        for j, source in enumerate(SOURCES):
            vals = [by[source][n]["success_rate"] or 0.0 for n in names]
            bars = ax.bar(np.arange(len(names)) + (j - 1) * w, vals, w, label=LABELS[source])
            ax.bar_label(bars, fmt="%.2f", fontsize=8)
        ax.set_xticks(np.arange(len(names)), [f"{n} test" for n in names])
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("solved to the known optimum")
        ax.set_title("AutoOpt chain on generated problems with a known optimum", fontsize=10)
        ax.legend(fontsize=8)
        save_png(fig, ctx.path(PLOT_E2E))


def _diff(by: dict, a: str, b: str, name: str) -> float | None:
    x, y = by[a][name]["success_rate"], by[b][name]["success_rate"]
    return None if x is None or y is None else x - y


if __name__ == "__main__":
    main()
