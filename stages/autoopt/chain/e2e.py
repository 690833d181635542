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

Every verdict seed (``common.seeds``) runs the chain with its own M1's predictions and BOBD draws.
This stage also writes reports/autoopt/metrics.json, the file claims.yaml reads (:func:`merge`):
each verdict seed's figures of M1, M2, M3 and the chain under the top-level ``per_seed``
(``{"0": {"margin_bleu": ..., "m2": ..., "m3": ..., "e2e": ...}}``), their means at the top level
(M1's at the top, then sections ``m2``, ``m3`` and ``e2e``).
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


def section(data: dict, key: str, where: str = "") -> dict:
    """A part's figures as one section of the merged metrics: the ``key`` entry (when the part
    nests its figures under the section's name) with the other top-level entries beside them, or
    the whole dict."""
    if key not in data:
        return data
    out = dict(data[key])
    for k, v in data.items():
        if k != key:
            if k in out:
                raise ValueError(f"{where}: '{k}' is both a top-level entry and one of {key}'s")
            out[k] = v
    return out


def chain_inputs(dd, preds: dict, ep) -> dict[str, dict]:
    """What the chain solves for one verdict seed, per test split: the rows used (their ids, types
    and known optima, and how many there were) and, per source, the Pyomo scripts (None where M2
    could not translate) with the reasons why not. ``preds``: that seed's M1 predictions
    (``{split: [{"id", "latex"}]}``)."""
    from .chain import translate_all

    out: dict[str, dict] = {}
    for name, split in EVAL_SPLITS.items():
        if split not in dd or name not in preds:
            print(f"  note: no {split} split or no M1 predictions for it; its figures are null")
            continue
        ds = dd[split]
        idx = known_rows(ds, ep.max_rows)
        m1_latex = {p["id"]: p["latex"] for p in preds[name]}
        rows = ds.select(idx)
        out[name] = {
            "count": {"used": len(idx), "of": len(known_rows(ds, 0)), "split_rows": len(ds)},
            "ids": list(rows["id"]), "types": [t["type"] for t in rows["tags"]],
            "optima": [float(v) for v in rows["optimum"]],
            "sources": {
                "reference_pyomo": (list(rows["pyomo"]), [""] * len(idx)),
                "ground_truth_latex": _columns(translate_all(rows["latex"])),
                "image": _columns(translate_all([m1_latex.get(i, "") for i in rows["id"]])),
            }}
    return out


def _columns(pairs: list[tuple]) -> tuple[list, list]:
    """[(script, reason), ...] -> ([script, ...], [reason, ...])."""
    return [a for a, _ in pairs], [b for _, b in pairs]


def run_chain(dd, preds: dict, ep, seeds: list[int]) -> tuple[dict[int, dict], list[dict]]:
    """The chain on both test splits from the three sources for every verdict seed, with each
    seed's M1 predictions (``preds["per_seed"][str(seed)]``) and BOBD draws. Every script of every
    seed goes to the sandbox in one batch (its workers start once). Returns ({seed: results}, CSV rows)."""
    from .chain import solve_scripts

    inputs = {s: chain_inputs(dd, preds["per_seed"][str(s)], ep) for s in seeds}
    scripts, reasons, bobd_seeds = [], [], []
    spans: dict[int, dict[tuple[str, str], slice]] = {s: {} for s in seeds}   # seed -> (split, source) -> its scripts
    for s in seeds:
        for name, inp in inputs[s].items():
            for source in SOURCES:
                sc, why = inp["sources"][source]
                spans[s][name, source] = slice(len(scripts), len(scripts) + len(sc))
                scripts += sc
                reasons += why
                bobd_seeds += [s] * len(sc)
    outs = solve_scripts(scripts, budget=ep.budget, seed=bobd_seeds, time_limit_s=ep.time_limit_s,
                         memory_mb=ep.memory_mb, workers=ep.workers, reasons=reasons,
                         desc=f"chain: seeds {seeds} x splits x sources")
    per_seed, csv_rows = {}, []
    for s in seeds:
        per_seed[s], rows = chain_results(inputs[s], {k: outs[span] for k, span in spans[s].items()}, ep, s)
        csv_rows += rows
    return per_seed, csv_rows


def chain_results(inputs: dict[str, dict], outcomes: dict[tuple[str, str], list], ep,
                  seed: int) -> tuple[dict, list[dict]]:
    """One verdict seed's figures from its chain outcomes (``{(split name, source): [Outcome]}``,
    in the order of ``inputs``' rows); returns (results, CSV rows)."""
    from .chain import success

    results: dict = {"rows_with_known_optimum": {}, "budget": ep.budget, "rel_tol": ep.rel_tol}
    csv_rows = []
    for name, inp in inputs.items():
        results["rows_with_known_optimum"][name] = inp["count"]
        results.setdefault("by_source", {})
        for source in SOURCES:
            outs = outcomes[name, source]
            flags = [bool(success(o, opt, ep.rel_tol)) for o, opt in zip(outs, inp["optima"])]
            results["by_source"].setdefault(source, {})[name] = summarise(flags, outs)
            for rid, typ, opt, o, ok in zip(inp["ids"], inp["types"], inp["optima"], outs, flags):
                csv_rows.append({"seed": seed, "split": name, "source": source, "id": rid, "type": typ,
                                 "optimum": opt, "stage": o.stage,
                                 "objective": o.solution.get("objective"), "success": int(ok),
                                 "seconds": round(o.seconds, 3)})
            s = results["by_source"][source][name]
            print(f"  seed {seed} {name:11s} {source:18s}: {s['successes']}/{s['rows']} solved to the optimum "
                  f"(stopped at: {s['stopped_at']})", flush=True)
    by = results.get("by_source", {})
    for name in EVAL_SPLITS:
        if name in by.get("image", {}):
            results.setdefault("success", {})[name] = by["image"][name]["success_rate"]
            results.setdefault("loss", {})[name] = {
                "m2": _diff(by, "reference_pyomo", "ground_truth_latex", name),
                "m1": _diff(by, "ground_truth_latex", "image", name)}
    return results, csv_rows


def merge(m1: dict, m2: dict, m3: dict, e2e: dict[int, dict]) -> dict:
    """The study's metrics file (claims.yaml reads it): every part's per-seed figures under the
    top-level ``per_seed`` (``{"0": {M1's figures, "m2": ..., "m3": ..., "e2e": ...}}``), their
    means at the top level (M1's at the top as before, then sections ``m2``, ``m3``, ``e2e``), and
    each part's seed-free figures beside its means. Every part must have run the same seeds."""
    from stages.common.seeds import per_seed_metrics

    m2, m3 = section(m2, "m2", "m2_metrics.json"), section(m3, "m3", "m3_metrics.json")
    parts = {"m1": m1, "m2": m2, "m3": m3}
    seeds = [int(s) for s in m1.get("per_seed", {})]
    for name, part in parts.items():
        got = [int(s) for s in part.get("per_seed", {})]
        if got != seeds:
            raise ValueError(f"the {name} metrics hold verdict seeds {got}, M1's hold {seeds}: re-run the "
                             f"study's stages with the same common.seeds")
    if sorted(e2e) != sorted(seeds):
        raise ValueError(f"the chain ran seeds {sorted(e2e)}, the parts {seeds}")
    per = {s: {**m1["per_seed"][str(s)], "m2": section(m2["per_seed"][str(s)], "m2", f"m2 seed {s}"),
               "m3": m3["per_seed"][str(s)], "e2e": e2e[s]} for s in seeds}

    def shared(part: dict, tree: dict) -> dict:
        """The part's figures that are not per seed (e.g. the retrieval baseline's, the protocol)."""
        return {k: v for k, v in part.items() if k not in ("per_seed", "seeds") and k not in tree}

    first = per[seeds[0]]
    out = per_seed_metrics(per, **shared(m1, first))
    out["m2"] = {**out["m2"], **shared(m2, first["m2"])}
    out["m3"] = {**out["m3"], **shared(m3, first["m3"])}
    return out


def main() -> None:
    with stage("autoopt", "e2e", AutoOptParams) as ctx:
        import json

        import datasets
        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        ep = ctx.params.e2e
        seeds = list(ctx.seeds)
        dd = datasets.load_from_disk(str(ctx.path(DATASET)))
        preds = json.loads(ctx.path(M1_PREDICTIONS).read_text())
        missing = [s for s in seeds if str(s) not in preds.get("per_seed", {})]
        if missing:
            raise FileNotFoundError(f"{ctx.path(M1_PREDICTIONS)} has no predictions of verdict seed(s) {missing}: "
                                    f"re-run autoopt-m1-evaluate with the same common.seeds")
        per_seed, csv_rows = run_chain(dd, preds, ep, seeds)
        merged = merge(*(json.loads(ctx.path(p).read_text()) for p in (M1_METRICS, M2_METRICS, M3_METRICS)),
                       per_seed)
        write_json(ctx.path(METRICS), merged)
        write_csv(ctx.path(E2E_ROWS), csv_rows)

        by = merged["e2e"].get("by_source", {})
        fig, ax = new_figure(figsize=(7, 3.8))
        names = [n for n in EVAL_SPLITS if n in by.get("image", {})]
        w = 0.26
        for j, source in enumerate(SOURCES):
            vals = [by[source][n].get("success_rate") or 0.0 for n in names]
            pos = np.arange(len(names)) + (j - 1) * w
            bars = ax.bar(pos, vals, w, label=LABELS[source])
            ax.bar_label(bars, fmt="%.2f", fontsize=8)
            for s in seeds:
                b = per_seed[s].get("by_source", {}).get(source, {})
                ax.plot(pos, [(b.get(n) or {}).get("success_rate") or 0.0 for n in names], "k.", ms=3)
        ax.set_xticks(np.arange(len(names)), [f"{n} test" for n in names])
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("solved to the known optimum")
        ax.set_title(f"AutoOpt chain on generated problems with a known optimum (mean of {len(seeds)} seeds, dots)",
                     fontsize=9)
        ax.legend(fontsize=8)
        save_png(fig, ctx.path(PLOT_E2E))


def _diff(by: dict, a: str, b: str, name: str) -> float | None:
    x, y = by[a][name]["success_rate"], by[b][name]["success_rate"]
    return None if x is None or y is None else x - y


if __name__ == "__main__":
    main()
