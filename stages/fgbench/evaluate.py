"""fgbench evaluate: the figures the claims read, with bootstrap intervals, and the plots.

Per question type and model: accuracy (boolean types, pooled over datasets) or MAE and RMSE
(value types, per dataset: their units differ), each with scipy's BCa bootstrap interval
(stats.bootstrap, through stages/common/inference.py).
The claims' figures: the data checks (from reports/fgbench/prepare.json), the best model's
accuracy on single-FG "does the property increase", FG-aware vs FG-agnostic on single-FG value
MAE (paired bootstrap), and the molecule-level MAE of fingerprints vs fingerprints + FG counts.

Outputs: reports/fgbench/metrics.json, by_type.png/.csv, mol_level.png/.csv.
"""
from __future__ import annotations

import zlib

from stages.common.runtime.stage import fail, stage

from .params import FGBenchParams
from .paths import CSV_MOL, CSV_TYPES, METRICS, PLOT_MOL, PLOT_TYPES, PREDICTIONS, PREPARE_METRICS

MODELS = ("constant", "fg_agnostic", "fg_aware", "text")
LEARNED = ("fg_agnostic", "fg_aware", "text")


def _seed(base: int, key: str) -> int:
    return base * 1_000_003 + zlib.crc32(key.encode())


def score_pairs(pairs: list[dict], n_boot: int, level: float, seed: int) -> dict:
    from . import records, stats

    out: dict = {}
    for type_ in records.TYPES:
        rows = [r for r in pairs if r["type"] == type_]
        if not rows:
            continue
        _, task = records.split_type(type_)
        if task == "value_regression":
            out[type_] = {}
            for d in sorted({r["dataset"] for r in rows}):
                rs = [r for r in rows if r["dataset"] == d]
                truth = [float(r["answer"]) for r in rs]
                out[type_][d] = {m: stats.score_value([float(r[m]) for r in rs], truth, n_boot, level,
                                                      _seed(seed, f"{type_}|{d}|{m}")) for m in MODELS}
        else:
            truth = [r["answer"] for r in rows]
            out[type_] = {m: stats.score_bool([r[m] for r in rows], truth, n_boot, level,
                                              _seed(seed, f"{type_}|{m}")) for m in MODELS}
    return out


def paired_mae_gain(rows: list[dict], a: str, b: str, n_boot: int, level: float, seed: int) -> dict:
    """MAE(a) - MAE(b) on the same questions, with a paired bootstrap interval (> 0: b is better)."""
    import numpy as np

    from . import stats

    truth = np.asarray([float(r["answer"]) for r in rows])
    ea = np.asarray([float(r[a]) for r in rows]) - truth
    eb = np.asarray([float(r[b]) for r in rows]) - truth
    lo, hi = stats.bootstrap([ea, eb], stats.diff_abs_stat, n_boot, level, seed)
    return {"n": int(len(truth)), f"mae_{a}": float(np.abs(ea).mean()), f"mae_{b}": float(np.abs(eb).mean()),
            "gain": float(np.abs(ea).mean() - np.abs(eb).mean()), "ci_low": lo, "ci_high": hi}


def claim_figures(pairs: list[dict], scored: dict, mols: dict, prep: dict, p, seed: int) -> dict:
    out: dict = {}
    # data checks
    out["counts"] = {"types_present": prep["types_present"], "min_type_split_count": prep["min_type_split_count"],
                     "by_type": prep["counts"], "questions": prep["questions"]}
    out["fg"] = dict(prep["fg"], vocabulary=prep["fg_vocabulary_size"])
    leaks = prep["leaks"]
    out["split"] = dict(leaks, leaks=int(leaks.get("scaffold", 0)) + int(leaks.get("acyclic", 0)) +
                        int(leaks.get("molecules_in_both", 0)))
    # best model on single-FG "does the property increase"
    sb = scored.get("single_bool_regression")
    if sb:
        best = max(LEARNED, key=lambda m: (sb[m]["accuracy"], -LEARNED.index(m)))
        out["single_increase"] = {"best_model": best, "best_accuracy": sb[best]["accuracy"],
                                  "best_ci_low": sb[best]["ci_low"], "best_ci_high": sb[best]["ci_high"],
                                  "n": sb[best]["n"], "majority_accuracy": sb["constant"]["accuracy"],
                                  **{f"{m}_accuracy": sb[m]["accuracy"] for m in LEARNED}}
    # FG-aware vs FG-agnostic, single-FG value regression, primary dataset
    rows = [r for r in pairs if r["type"] == "single_value_regression" and r["dataset"] == p.primary_dataset]
    if rows:
        out["single_value"] = dict(paired_mae_gain(rows, "fg_agnostic", "fg_aware", p.n_boot, p.ci_level,
                                                   _seed(seed, "single_value_gain")),
                                   dataset=p.primary_dataset,
                                   mae_constant=scored["single_value_regression"][p.primary_dataset]["constant"]["mae"],
                                   mae_text=scored["single_value_regression"][p.primary_dataset]["text"]["mae"])
    # molecule level
    out["mol_level"] = {}
    for d, res in sorted(mols.items()):
        rs = [{"answer": y, "fp": a, "fp_fg": b} for y, a, b in zip(res["y"], res["fp"], res["fp_fg"])]
        out["mol_level"][d] = paired_mae_gain(rs, "fp", "fp_fg", p.n_boot, p.ci_level, _seed(seed, f"mol|{d}"))
        out["mol_level"][d]["fg_vocabulary"] = res["fg_vocab"]
    if p.primary_dataset in out["mol_level"]:
        out["mol_level"]["gain"] = out["mol_level"][p.primary_dataset]["gain"]
        out["mol_level"]["dataset"] = p.primary_dataset
    return out


def plots(scored: dict, figs: dict, primary: str, root) -> None:
    from stages.common.plots import new_figure, save_png, write_csv

    from . import records

    rows = []
    for type_, res in scored.items():
        if records.split_type(type_)[1] == "value_regression":
            for d, by_model in res.items():
                for m, s in by_model.items():
                    rows.append({"type": type_, "dataset": d, "model": m, "metric": "mae", "value": s["mae"],
                                 "ci_low": s["mae_ci_low"], "ci_high": s["mae_ci_high"], "n": s["n"]})
        else:
            for m, s in res.items():
                rows.append({"type": type_, "dataset": "all", "model": m, "metric": "accuracy", "value": s["accuracy"],
                             "ci_low": s["ci_low"], "ci_high": s["ci_high"], "n": s["n"]})
    write_csv(root / CSV_TYPES, rows)
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    btypes = [t for t in records.TYPES if t in scored and records.split_type(t)[1] != "value_regression"]
    vtypes = [t for t in records.TYPES if t in scored and records.split_type(t)[1] == "value_regression"
              and primary in scored[t]]
    w = 0.2
    for k, m in enumerate(MODELS):
        for ax, types, metric in ((ax1, btypes, "accuracy"), (ax2, vtypes, "mae")):
            vals, lo, hi = [], [], []
            for t in types:
                s = scored[t][m] if metric == "accuracy" else scored[t][primary][m]
                v = s[metric]
                a, b = (s["ci_low"], s["ci_high"]) if metric == "accuracy" else (s["mae_ci_low"], s["mae_ci_high"])
                vals.append(v)
                lo.append(v - a)
                hi.append(b - v)
            xs = [i + (k - 1.5) * w for i in range(len(types))]
            ax.bar(xs, vals, w, yerr=[lo, hi], capsize=2, label=m)
    ax1.axhline(0.5, color="k", lw=0.8, ls="--")
    ax1.set_xticks(range(len(btypes)), [t.replace("_", "\n") for t in btypes], fontsize=7)
    ax1.set_ylabel("test accuracy (95% bootstrap CI)")
    ax1.set_title("boolean questions (all datasets)")
    ax1.legend(fontsize=7)
    ax2.set_xticks(range(len(vtypes)), [t.replace("_", "\n") for t in vtypes], fontsize=7)
    ax2.set_ylabel(f"test MAE on {primary}")
    ax2.set_title(f"value questions ({primary})")
    save_png(fig, root / PLOT_TYPES)

    mol = {d: v for d, v in figs["mol_level"].items() if isinstance(v, dict)}
    mrows = []
    for d, s in mol.items():
        mrows.append({"features": "fingerprint", "dataset": d, "mae": s["mae_fp"]})
        mrows.append({"features": "fingerprint+FG counts", "dataset": d, "mae": s["mae_fp_fg"]})
    if not mrows:
        mrows = [{"features": "none", "dataset": "none", "mae": float("nan")}]
    write_csv(root / CSV_MOL, mrows)
    fig, ax = new_figure(figsize=(6, 4))
    ds = sorted(mol)
    ax.bar([i - 0.2 for i in range(len(ds))], [mol[d]["mae_fp"] for d in ds], 0.4, label="fingerprint")
    ax.bar([i + 0.2 for i in range(len(ds))], [mol[d]["mae_fp_fg"] for d in ds], 0.4, label="fingerprint + FG counts")
    ax.set_xticks(range(len(ds)), ds)
    ax.set_ylabel("test MAE (molecule level, random forest)")
    ax.legend()
    save_png(fig, root / PLOT_MOL)


def main() -> None:
    with stage("fgbench", "evaluate", FGBenchParams) as ctx:
        import json

        from stages.common.io import write_json

        p = ctx.params.evaluate
        pairs = json.loads((ctx.path(PREDICTIONS) / "pairs.json").read_text())
        mols = json.loads((ctx.path(PREDICTIONS) / "molecules.json").read_text())
        prep = json.loads(ctx.path(PREPARE_METRICS).read_text())
        if not pairs:
            fail("fgbench.evaluate: no test questions to score")
        scored = score_pairs(pairs, p.n_boot, p.ci_level, ctx.seed)
        figs = claim_figures(pairs, scored, mols, prep, p, ctx.seed)
        write_json(ctx.path(METRICS), {**figs, "pairs": scored, "ci_level": p.ci_level, "n_boot": p.n_boot,
                                       "source": prep.get("source")})
        plots(scored, figs, p.primary_dataset, ctx.root)
        si, sv = figs.get("single_increase", {}), figs.get("single_value", {})
        print(f"  single-FG increase: best {si.get('best_model')} {si.get('best_accuracy', float('nan')):.3f} "
              f"[{si.get('best_ci_low', float('nan')):.3f}, {si.get('best_ci_high', float('nan')):.3f}]; "
              f"single-FG value MAE gain (agnostic - aware) {sv.get('gain', float('nan')):.3f}; "
              f"molecule-level gain {figs['mol_level'].get('gain', float('nan'))}")


if __name__ == "__main__":
    main()
