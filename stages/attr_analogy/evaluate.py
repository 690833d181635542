"""attr_analogy evaluate: the figures the claims read, the plots.

reports/attr_analogy/metrics.json is what claims.yaml reads; every figure there is computed
here from data/attr_analogy/results.json (written by the train step). Plots: accuracy vs k
(exact and sampled, M and log M), the pair-removal ablation, the noise sweep, real text.
"""
from __future__ import annotations

from stages.common.stage import stage

from .params import AttrParams
from .train import RESULTS

METRICS = "reports/attr_analogy/metrics.json"
PLOT_K = "reports/attr_analogy/accuracy_vs_k.png"
PLOT_REMOVAL = "reports/attr_analogy/removal.png"
PLOT_NOISE = "reports/attr_analogy/noise.png"
PLOT_REALTEXT = "reports/attr_analogy/realtext.png"
CSV_K = "reports/attr_analogy/accuracy_vs_k.csv"
CSV_REMOVAL = "reports/attr_analogy/removal.csv"
CSV_NOISE = {kind: f"reports/attr_analogy/noise_{kind}.csv" for kind in ("sigma", "keep", "pairs")}
CSV_REALTEXT = "reports/attr_analogy/realtext.csv"
MATS = ("M", "logM")


def _min(values):
    values = [v for v in values if v is not None]
    return min(values) if values else None


def claim_metrics(res: dict, scoring: str) -> dict:
    """The figures of checks (i)-(iv) under one scoring ('eq13' primary, '3cosadd' beside it)."""
    K, ks = res["K"], res["ks"]
    i1, i2, i3 = ks.index(K + 1), ks.index(2 * K), ks.index(K + 3)
    out: dict = {"exact": {}, "sampled": {}}
    for name, r in res["spreads"].items():
        ex, sa = r["exact"], r["sampled"]
        out["exact"][name] = {"logM_acc_K1": ex["logM"][scoring][i1], "M_acc_K1": ex["M"][scoring][i1]}
        sat = sa["logM"][scoring][i1:i2 + 1]
        m_curve = sa["M"][scoring]
        peak = max(range(len(ks)), key=lambda i: (m_curve[i], -i))
        out["sampled"][name] = {
            "logM_acc_K1": sa["logM"][scoring][i1], "M_acc_K1": m_curve[i1],
            "logM_min_K1_2K": min(sat), "logM_argmin_K1_2K": ks[i1 + sat.index(min(sat))],
            "M_peak_k": ks[peak], "M_peak_acc": m_curve[peak], "M_acc_last_k": m_curve[-1],
            "logM_acc_last_k": sa["logM"][scoring][-1], "last_k": ks[-1],
        }
        ex_m = ex["M"][scoring]
        epk = max(range(len(ks)), key=lambda i: (ex_m[i], -i))
        out["exact"][name].update({"M_peak_k": ks[epk], "M_peak_acc": ex_m[epk], "M_acc_last_k": ex_m[-1],
                                   "logM_acc_last_k": ex["logM"][scoring][-1]})
    out["exact"]["logM_acc_K1_min"] = min(v["logM_acc_K1"] for k, v in out["exact"].items()
                                          if isinstance(v, dict))
    out["saturation"] = {"corpus": res["saturation_corpus"],
                         "logM_min_K1_2K": out["sampled"][res["saturation_corpus"]]["logM_min_K1_2K"]}

    # (iii): log M - M for every k >= K+1 (and >= K+3), over exact and sampled, every spread
    diffs = []
    for name, r in res["spreads"].items():
        for source in ("exact", "sampled"):
            L, M = r[source]["logM"][scoring], r[source]["M"][scoring]
            diffs += [(L[i] - M[i], ks[i], source, name) for i in range(i1, len(ks))]
    worst1 = min(diffs)
    worst3 = min(d for d in diffs if d[1] >= K + 3)
    out["logm_minus_m"] = {
        "min_k_ge_K1": worst1[0], "argmin_k_ge_K1": {"k": worst1[1], "source": worst1[2], "corpus": worst1[3]},
        "min_k_ge_K3": worst3[0], "argmin_k_ge_K3": {"k": worst3[1], "source": worst3[2], "corpus": worst3[3]},
        "ks_from": ks[i1], "ks_to": ks[-1], "n_comparisons": len(diffs)}
    for source in ("exact", "sampled"):
        ds = [d for d in diffs if d[2] == source]
        out["logm_minus_m"][source] = {"min_k_ge_K1": min(ds)[0],
                                       "min_k_ge_K3": min(d for d in ds if d[1] >= K + 3)[0]}
    # the largest k up to which log M >= M holds at every k and in every setting
    bad = sorted({d[1] for d in diffs if d[0] < 0})
    out["logm_minus_m"]["holds_through_k"] = ks[-1] if not bad else max(
        [k for k in ks[i1:] if k < bad[0]], default=None)
    del i3

    out["removal"] = removal_metrics(res["removal"], K, scoring)
    return out


def removal_metrics(rm: dict, K: int, scoring: str) -> dict:
    """(iv): removal, pooled over relations, k in [2K, 3K] where accuracy before is below 0.99."""
    out = {"pairs": rm["pairs"], "relations": [r["relation"] for r in rm["relations"]]}
    for mat in MATS:
        w = [r["n_analogies"] for r in rm["relations"]]
        pooled = {}
        for when in ("before", "after"):
            pooled[when] = [sum(wi * r[when][mat][scoring][j] for wi, r in zip(w, rm["relations"])) / sum(w)
                            for j in range(len(rm["ks"]))]
        window = [j for j, k in enumerate(rm["ks"]) if 2 * K <= k <= 3 * K]
        below = [j for j in window if pooled["before"][j] < 0.99]
        ratios = [pooled["after"][j] / pooled["before"][j] for j in below if pooled["before"][j] > 0]
        out[mat] = {
            "before": pooled["before"], "after": pooled["after"],
            "before_max_2K_3K": max(pooled["before"][j] for j in window),
            "before_mean_2K_3K": sum(pooled["before"][j] for j in window) / len(window),
            "after_mean_2K_3K": sum(pooled["after"][j] for j in window) / len(window),
            "ks_below_ceiling": [rm["ks"][j] for j in below],
            "ratio_min": min(ratios) if ratios else None,
            "before_K1": pooled["before"][rm["ks"].index(K + 1)],
            "after_K1": pooled["after"][rm["ks"].index(K + 1)],
        }
    out["ratio_min"] = out["logM"]["ratio_min"]
    return out


def noise_metrics(noise: dict, scoring: str) -> dict:
    out = {}
    for kind in ("sigma", "keep", "pairs"):
        out[kind] = [{"level": row["level"], **{f"{mat}_K1": row[mat][scoring][0] for mat in MATS},
                      **{f"{mat}_2K": row[mat][scoring][1] for mat in MATS}} for row in noise[kind]]
    return out


def realtext_metrics(rt: dict, k_report: int, level: float) -> dict:
    from .model import wilson_interval

    n = rt["covered"]
    if k_report not in rt["ks"]:
        raise ValueError(f"attr_analogy.evaluate.k_report = {k_report}: real text was scored at k in {rt['ks']}")
    j = rt["ks"].index(k_report)
    out = {"vocab": rt["vocab"], "questions": rt["questions"], "covered": n,
           "coverage": n / rt["questions"], "k_report": rt["ks"][j], "ci_level": level,
           "chance": 1.0 / rt["vocab"], "ks": rt["ks"]}
    for mat in MATS:
        out[mat] = {}
        for sc in ("eq13", "3cosadd"):
            hits = rt[mat][sc][j]
            lo, hi = wilson_interval(hits, n, level)
            out[mat][sc] = {"hits": hits, "n": n, "accuracy": hits / n if n else None,
                            "ci_low": lo, "ci_high": hi,
                            "by_k": [h / n if n else None for h in rt[mat][sc]]}
    lo = out["logM"]["eq13"]["ci_low"]
    out["logM_ci_low_over_chance"] = lo / out["chance"] if n else None
    return out


def main() -> None:
    with stage("attr_analogy", "evaluate", AttrParams) as ctx:
        import json

        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        from .model import wilson_interval

        res = json.loads(ctx.path(RESULTS).read_text())
        K, ks = res["K"], res["ks"]
        m = {"K": K, "V": res["V"], "n_analogies": res["n_analogies"], "power": res["power"],
             **claim_metrics(res, "eq13"),
             "exclude_abc": claim_metrics(res, "3cosadd"),
             "noise": noise_metrics(res["noise"], "eq13"),
             "realtext": realtext_metrics(res["realtext"], ctx.params.evaluate.k_report,
                                          ctx.params.evaluate.ci_level)}
        for name, r in res["spreads"].items():
            m["exact"][name]["logM_rank"] = r["exact"]["logM_rank"]
            m["sampled"][name]["zero_cells"] = r["corpus"]["zero_cells"]
            m["sampled"][name]["pairs"] = r["corpus"]["pairs"]
        write_json(ctx.path(METRICS), m)

        # ---- accuracy vs k ------------------------------------------------------------
        names = res["spread_order"]
        fig, axes = new_figure(2, len(names), figsize=(5.4 * len(names), 8.5), squeeze=False)
        colours = {"M": "tab:blue", "logM": "tab:orange"}
        for col, name in enumerate(names):
            for row, source in enumerate(("exact", "sampled")):
                ax = axes[row][col]
                r = res["spreads"][name][source]
                for mat in MATS:
                    for sc, style in (("eq13", "-"), ("3cosadd", "--")):
                        ax.plot(ks, r[mat][sc], style, color=colours[mat], lw=1.4 if sc == "eq13" else 1.0,
                                label=f"{'log M' if mat == 'logM' else 'M'} ({'Eq. 13' if sc == 'eq13' else 'excl. a,b,c'})")
                ax.axvline(K + 1, color="grey", lw=0.8, ls=":")
                ax.axvspan(K + 1, 2 * K, color="grey", alpha=0.08)
                ax.set_xscale("log")
                ax.set_ylim(-0.02, 1.02)
                extra = (f", {r_pairs(res, name)} pairs" if source == "sampled" else "")
                ax.set_title(f"{source} model, {name} s_k spread{extra}", fontsize=9)
                ax.set_xlabel("k (top eigenvectors kept)")
                ax.set_ylabel("analogy accuracy")
                ax.grid(True, alpha=0.3)
        axes[0][0].legend(fontsize=7)
        fig.suptitle(f"Attribute-flip analogies, K = {K} attributes (dotted: k = K+1; band: K+1..2K)")
        fig.tight_layout()
        save_png(fig, ctx.path(PLOT_K))
        rows = []
        for i, k in enumerate(ks):
            row = {"k": k}
            for name in names:
                for source in ("exact", "sampled"):
                    for mat in MATS:
                        for sc in ("eq13", "3cosadd"):
                            row[f"{source}_{name}_{mat}_{sc}"] = res["spreads"][name][source][mat][sc][i]
            rows.append(row)
        write_csv(ctx.path(CSV_K), rows)

        # ---- removal ----------------------------------------------------------------
        rm = res["removal"]
        fig, ax = new_figure(figsize=(6.5, 4.2))
        for mat in MATS:
            ax.plot(rm["ks"], m["removal"][mat]["before"], "-o", ms=3, color=colours[mat],
                    label=f"{'log M' if mat == 'logM' else 'M'} before")
            ax.plot(rm["ks"], m["removal"][mat]["after"], "--s", ms=3, color=colours[mat],
                    label=f"{'log M' if mat == 'logM' else 'M'} after removing the relation's pairs")
        ax.axvspan(2 * K, 3 * K, color="grey", alpha=0.1, label="checked: k in [2K, 3K]")
        ax.set_xlabel("k"); ax.set_ylabel("accuracy on the relation's analogies (Eq. 13)")
        ax.set_title(f"Pair removal, sampled corpus of {rm['pairs']} pairs, "
                     f"{len(rm['relations'])} relations pooled", fontsize=9)
        ax.set_ylim(-0.02, 1.02); ax.grid(True, alpha=0.3); ax.legend(fontsize=7)
        save_png(fig, ctx.path(PLOT_REMOVAL))
        write_csv(ctx.path(CSV_REMOVAL), [
            {"k": k, **{f"{mat}_{when}": m["removal"][mat][when][j] for mat in MATS for when in ("before", "after")}}
            for j, k in enumerate(rm["ks"])])

        # ---- noise ------------------------------------------------------------------
        titles = {"sigma": "log-normal noise on P(i,j): sigma", "keep": "vocabulary kept (pruning)",
                  "pairs": "pairs drawn from the exact P"}
        fig, axes = new_figure(1, 3, figsize=(14, 4))
        for ax, kind in zip(axes, ("sigma", "keep", "pairs")):
            pts = m["noise"][kind]
            x = [p["level"] for p in pts]
            for mat in MATS:
                for tag, style in (("K1", "-o"), ("2K", "--s")):
                    ax.plot(x, [p[f"{mat}_{tag}"] for p in pts], style, ms=3, color=colours[mat],
                            label=f"{'log M' if mat == 'logM' else 'M'}, k = {'K+1' if tag == 'K1' else '2K'}")
            if kind == "pairs":
                ax.set_xscale("log")
            ax.set_xlabel(titles[kind]); ax.set_ylim(-0.02, 1.02); ax.grid(True, alpha=0.3)
            write_csv(ctx.path(CSV_NOISE[kind]), pts)
        axes[0].set_ylabel("analogy accuracy (Eq. 13)")
        axes[0].legend(fontsize=7)
        fig.suptitle(f"Noise robustness, exact model of the {res['noise']['spread']} spread", fontsize=10)
        save_png(fig, ctx.path(PLOT_NOISE))

        # ---- real text --------------------------------------------------------------
        rt, mr = res["realtext"], m["realtext"]
        fig, ax = new_figure(figsize=(6.5, 4.2))
        csv_rows = [{"k": k} for k in rt["ks"]]
        for mat in MATS:
            for sc, style in (("eq13", "-o"), ("3cosadd", "--s")):
                acc = np.array([h / rt["covered"] for h in rt[mat][sc]]) if rt["covered"] else np.zeros(len(rt["ks"]))
                ci = np.array([wilson_interval(h, rt["covered"], mr["ci_level"]) for h in rt[mat][sc]])
                ax.errorbar(rt["ks"], acc, yerr=[acc - ci[:, 0], ci[:, 1] - acc], fmt=style, ms=3,
                            color=colours[mat], capsize=2,
                            label=f"{'log M' if mat == 'logM' else 'M'} ({'Eq. 13' if sc == 'eq13' else 'excl. a,b,c'})")
                for row, a, (lo, hi) in zip(csv_rows, acc, ci):
                    row[f"{mat}_{sc}"] = float(a)
                    row[f"{mat}_{sc}_lo"] = float(lo)
                    row[f"{mat}_{sc}_hi"] = float(hi)
        ax.axhline(mr["chance"], color="grey", lw=0.8, ls=":", label="chance 1/V")
        ax.set_xscale("log")
        ax.set_xlabel("k"); ax.set_ylabel(f"accuracy, {int(mr['ci_level'] * 100)}% Wilson interval")
        ax.set_title(f"{rt['text']}: {rt['covered']} of {rt['questions']} questions covered "
                     f"({100 * mr['coverage']:.1f}%), V = {rt['vocab']}", fontsize=9)
        ax.grid(True, alpha=0.3); ax.legend(fontsize=7)
        save_png(fig, ctx.path(PLOT_REALTEXT))
        write_csv(ctx.path(CSV_REALTEXT), csv_rows)

        for key in ("exact", "saturation", "logm_minus_m"):
            ctx.run.log_dict(m[key], f"metrics_{key}.json")
        print(f"  (i) exact log M at K+1, min over spreads: {m['exact']['logM_acc_K1_min']:.3f}; "
              f"(ii) sampled log M min over K+1..2K: {m['saturation']['logM_min_K1_2K']:.3f}; "
              f"(iii) min log M - M: {m['logm_minus_m']['min_k_ge_K1']:+.3f} (k >= K+1), "
              f"{m['logm_minus_m']['min_k_ge_K3']:+.3f} (k >= K+3); (iv) removal ratio min: "
              f"{m['removal']['ratio_min']}; real text log M: {mr['logM']['eq13']['hits']}/{mr['covered']}")


def r_pairs(res: dict, name: str) -> str:
    n = res["spreads"][name]["corpus"]["pairs"]
    return f"{n / 1e6:g}M" if n >= 1e6 else f"{n / 1e3:g}k"


if __name__ == "__main__":
    main()
