"""fgbench evaluate: per verdict seed, the figures the claims read, with bootstrap intervals, and
the plots.

Per seed (``ctx.seeds``), per question type and model: accuracy (boolean types, pooled over
datasets) or MAE and RMSE (value types, per dataset: their units differ), each with scipy's BCa
bootstrap interval over that seed's test questions (stats.bootstrap, through
stages/common/inference.py). The claims' figures, per seed: the data checks (from
reports/fgbench/prepare.json), the best model's accuracy on single-FG "does the property
increase" (and the structure-blind model's, its control), FG-aware vs FG-agnostic on single-FG
value MAE (paired; and the FG-shuffled control vs FG-agnostic), and the molecule-level MAE of
fingerprints vs fingerprints + FG counts (and + another molecule's counts, the control). The
ledger judges each claim over the seeds.

Outputs: reports/fgbench/metrics.json (``per_seed`` beside the mean over seeds of every figure),
by_type.png/.csv and mol_level.png/.csv (the mean over seeds, each seed's value as a dot).
"""
from __future__ import annotations

import zlib

from stages.common.runtime.stage import fail, stage

from .params import FGBenchParams
from .paths import CSV_MOL, CSV_TYPES, METRICS, PLOT_MOL, PLOT_TYPES, PREDICTIONS, PREPARE_METRICS

MODELS = ("constant", "label_only", "fg_agnostic", "fg_aware", "fg_shuffled", "text")
LEARNED = ("fg_agnostic", "fg_aware", "text")      # the claim's "our three models"


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
    """One seed's figures: ``prep`` is that seed's section of prepare.json."""
    out: dict = {}
    # data checks
    out["counts"] = {"types_present": prep["types_present"], "min_type_split_count": prep["min_type_split_count"],
                     "by_type": prep["counts"], "questions": prep["questions"]}
    out["fg"] = dict(prep["fg"])
    leaks = prep["leaks"]
    out["split"] = dict(leaks, leaks=int(leaks.get("scaffold", 0)) + int(leaks.get("acyclic", 0)) +
                        int(leaks.get("molecules_in_both", 0)))
    # best model on single-FG "does the property increase"; the structure-blind arm beside it
    sb = scored.get("single_bool_regression")
    if sb:
        best = max(LEARNED, key=lambda m: (sb[m]["accuracy"], -LEARNED.index(m)))
        out["single_increase"] = {
            "best_model": best, "best_accuracy": sb[best]["accuracy"], "best_ci_low": sb[best]["ci_low"],
            "best_ci_high": sb[best]["ci_high"], "n": sb[best]["n"],
            "majority_accuracy": sb["constant"]["accuracy"], "majority_ci_low": sb["constant"]["ci_low"],
            "aware_minus_agnostic": sb["fg_aware"]["accuracy"] - sb["fg_agnostic"]["accuracy"],
            "shuffled_minus_agnostic": sb["fg_shuffled"]["accuracy"] - sb["fg_agnostic"]["accuracy"],
            **{f"{m}_accuracy": sb[m]["accuracy"] for m in MODELS if m != "constant"},
            **{f"{m}_ci_low": sb[m]["ci_low"] for m in MODELS if m != "constant"}}
    # FG-aware (and its shuffled control) vs FG-agnostic, single-FG value regression, primary dataset
    rows = [r for r in pairs if r["type"] == "single_value_regression" and r["dataset"] == p.primary_dataset]
    if rows:
        sv = scored["single_value_regression"][p.primary_dataset]
        aware = paired_mae_gain(rows, "fg_agnostic", "fg_aware", p.n_boot, p.ci_level,
                                _seed(seed, "single_value_gain"))
        blind = paired_mae_gain(rows, "fg_agnostic", "fg_shuffled", p.n_boot, p.ci_level,
                                _seed(seed, "single_value_gain_shuffled"))
        out["single_value"] = dict(aware, dataset=p.primary_dataset,
                                   gain_shuffled=blind["gain"], ci_low_shuffled=blind["ci_low"],
                                   ci_high_shuffled=blind["ci_high"], mae_fg_shuffled=blind["mae_fg_shuffled"],
                                   mae_constant=sv["constant"]["mae"], mae_text=sv["text"]["mae"],
                                   mae_label_only=sv["label_only"]["mae"])
    # molecule level
    out["mol_level"] = {}
    for d, res in sorted(mols.items()):
        rs = [{"answer": y, "fp": a, "fp_fg": b, "fp_fg_shuffled": c}
              for y, a, b, c in zip(res["y"], res["fp"], res["fp_fg"], res["fp_fg_shuffled"])]
        fg = paired_mae_gain(rs, "fp", "fp_fg", p.n_boot, p.ci_level, _seed(seed, f"mol|{d}"))
        blind = paired_mae_gain(rs, "fp", "fp_fg_shuffled", p.n_boot, p.ci_level, _seed(seed, f"mol_shuffled|{d}"))
        out["mol_level"][d] = dict(fg, gain_shuffled=blind["gain"], ci_low_shuffled=blind["ci_low"],
                                   ci_high_shuffled=blind["ci_high"], mae_fp_fg_shuffled=blind["mae_fp_fg_shuffled"],
                                   fg_vocabulary=res["fg_vocab"])
    if p.primary_dataset in out["mol_level"]:
        out["mol_level"]["gain"] = out["mol_level"][p.primary_dataset]["gain"]
        out["mol_level"]["gain_shuffled"] = out["mol_level"][p.primary_dataset]["gain_shuffled"]
        out["mol_level"]["dataset"] = p.primary_dataset
    return out


def evaluate_seed(pairs: list[dict], mols: dict, prep: dict, p, seed: int) -> dict:
    """One verdict seed's metrics: the claims' figures and every type's scores (``pairs``)."""
    scored = score_pairs(pairs, p.n_boot, p.ci_level, seed)
    return {**claim_figures(pairs, scored, mols, prep, p, seed), "pairs": scored}


def plots(per_seed: dict, primary: str, root) -> None:
    """by_type (accuracy per boolean type, MAE per value type on the primary set) and mol_level:
    bars are the mean over the seeds, dots each seed's value."""
    import numpy as np

    from stages.common.plots import new_figure, save_png, write_csv

    from . import records

    seeds = list(per_seed)
    first = per_seed[seeds[0]]["pairs"]

    def values(type_, dataset, model, metric):
        return [per_seed[s]["pairs"][type_][dataset][model][metric] if dataset != "all"
                else per_seed[s]["pairs"][type_][model][metric] for s in seeds]

    rows = []
    for type_, res in first.items():
        value_type = records.split_type(type_)[1] == "value_regression"
        for d in (res if value_type else ["all"]):
            for m in MODELS:
                metric = "mae" if value_type else "accuracy"
                v = values(type_, d, m, metric)
                rows.append({"type": type_, "dataset": d, "model": m, "metric": metric, "value": float(np.mean(v)),
                             "seed_min": float(min(v)), "seed_max": float(max(v)), "seeds": len(v)})
    write_csv(root / CSV_TYPES, rows)
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(14, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    btypes = [t for t in records.TYPES if t in first and records.split_type(t)[1] != "value_regression"]
    vtypes = [t for t in records.TYPES if t in first and records.split_type(t)[1] == "value_regression"
              and primary in first[t]]
    w = 0.8 / len(MODELS)
    for k, m in enumerate(MODELS):
        for ax, types, metric, d in ((ax1, btypes, "accuracy", "all"), (ax2, vtypes, "mae", primary)):
            xs = [i + (k - (len(MODELS) - 1) / 2) * w for i in range(len(types))]
            per = [values(t, d, m, metric) for t in types]
            bars = ax.bar(xs, [np.mean(v) for v in per], w, label=m)
            for x, v in zip(xs, per):
                ax.plot([x] * len(v), v, ".", color="k", ms=2.5)
            del bars
    ax1.axhline(0.5, color="k", lw=0.8, ls="--")
    ax1.set_xticks(range(len(btypes)), [t.replace("_", "\n") for t in btypes], fontsize=7)
    ax1.set_ylabel("test accuracy (bar: mean over seeds; dots: seeds)")
    ax1.set_title(f"boolean questions (all datasets, {len(seeds)} seeds)")
    ax1.legend(fontsize=7)
    ax2.set_xticks(range(len(vtypes)), [t.replace("_", "\n") for t in vtypes], fontsize=7)
    ax2.set_ylabel(f"test MAE on {primary}")
    ax2.set_title(f"value questions ({primary})")
    save_png(fig, root / PLOT_TYPES)

    arms = (("fp", "fingerprint"), ("fp_fg", "fingerprint+FG counts"),
            ("fp_fg_shuffled", "fingerprint+shuffled FG counts"))
    ds = sorted(d for d, v in per_seed[seeds[0]]["mol_level"].items() if isinstance(v, dict))
    mrows = []
    for d in ds:
        for key, label in arms:
            v = [per_seed[s]["mol_level"][d][f"mae_{key}"] for s in seeds]
            mrows.append({"features": label, "dataset": d, "mae": float(np.mean(v)),
                          "seed_min": float(min(v)), "seed_max": float(max(v))})
    if not mrows:
        mrows = [{"features": "none", "dataset": "none", "mae": float("nan"), "seed_min": float("nan"),
                  "seed_max": float("nan")}]
    write_csv(root / CSV_MOL, mrows)
    fig, ax = new_figure(figsize=(7, 4))
    for k, (key, label) in enumerate(arms):
        xs = [i + (k - 1) * 0.27 for i in range(len(ds))]
        per = [[per_seed[s]["mol_level"][d][f"mae_{key}"] for s in seeds] for d in ds]
        ax.bar(xs, [np.mean(v) for v in per], 0.27, label=label)
        for x, v in zip(xs, per):
            ax.plot([x] * len(v), v, ".", color="k", ms=3)
    ax.set_xticks(range(len(ds)), ds)
    ax.set_ylabel(f"test MAE (molecule level, random forest; {len(seeds)} seeds)")
    ax.legend(fontsize=8)
    save_png(fig, root / PLOT_MOL)


def main() -> None:
    with stage("fgbench", "evaluate", FGBenchParams) as ctx:
        import json

        from stages.common.io import write_json
        from stages.common.seeds import gather_shards, per_seed_metrics, run_seeds

        p, seeds = ctx.params.evaluate, ctx.seeds
        prep = json.loads(ctx.path(PREPARE_METRICS).read_text())
        found = sorted(int(d.name) for d in ctx.path(PREDICTIONS).iterdir() if d.is_dir() and d.name.isdigit())
        try:
            gather_shards({PREDICTIONS: found}, seeds)
            gather_shards({PREPARE_METRICS: [int(s) for s in prep.get("per_seed", {})]}, seeds)
        except ValueError as exc:
            fail(f"fgbench.evaluate: {exc}")

        def one(seed: int) -> dict:
            pairs = json.loads((ctx.path(PREDICTIONS) / str(seed) / "pairs.json").read_text())
            mols = json.loads((ctx.path(PREDICTIONS) / str(seed) / "molecules.json").read_text())
            if not pairs:
                fail(f"fgbench.evaluate: no test questions to score for seed {seed}")
            return evaluate_seed(pairs, mols, prep["per_seed"][str(seed)], p, seed)

        per_seed = run_seeds(seeds, one, "seed")
        write_json(ctx.path(METRICS), per_seed_metrics(per_seed, ci_level=p.ci_level, n_boot=p.n_boot,
                                                       source=prep.get("source"),
                                                       fg_vocabulary=prep.get("fg_vocabulary_size")))
        plots(per_seed, p.primary_dataset, ctx.root)
        for s, f in per_seed.items():
            si, sv, ml = f.get("single_increase", {}), f.get("single_value", {}), f["mol_level"]
            print(f"  seed {s}: single-FG increase best {si.get('best_model')} {si.get('best_accuracy', float('nan')):.3f} "
                  f"(ci low {si.get('best_ci_low', float('nan')):.3f}; label only {si.get('label_only_accuracy', float('nan')):.3f}); "
                  f"single-FG value MAE gain aware {sv.get('gain', float('nan')):.3f}, shuffled "
                  f"{sv.get('gain_shuffled', float('nan')):.3f}; molecule-level gain {ml.get('gain', float('nan')):.3f}, "
                  f"shuffled {ml.get('gain_shuffled', float('nan')):.3f}")


if __name__ == "__main__":
    main()
