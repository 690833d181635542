"""attr_analogy evaluate: the figures the claims read, the plots.

reports/attr_analogy/metrics.json is what claims.yaml reads; every figure there is computed
here from data/attr_analogy/results.json (written by the train step). Per verdict seed
(``per_seed``, :func:`stages.common.seeds.per_seed_metrics`) the figures of that seed's corpora
beside the exact model's (the same on every seed); at the top level the mean over the seeds of
every figure and the real-text figures (no draw). Plots: accuracy vs k (exact and sampled, M and
log M; sampled curves the mean over the seeds, each seed a thin line), the control (the
attribute mixture), the pair-removal ablation, the noise sweep, real text.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import AttrParams
from .paths import (
    CSV_CONTROL,
    CSV_K,
    CSV_NOISE,
    CSV_REALTEXT,
    CSV_REMOVAL,
    CSV_REMOVAL_EXACT,
    METRICS,
    PLOT_CONTROL,
    PLOT_K,
    PLOT_NOISE,
    PLOT_REALTEXT,
    PLOT_REMOVAL,
    RESULTS,
)

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
    out["paper_set"] = paper_set_metrics(res, scoring)
    return out


def window_stats(curve: list, lo: int, hi: int) -> dict:
    """Best, its k, mean, and drop from the peak to the window's last k, over ks[lo..hi]."""
    w = curve[lo:hi + 1]
    j = max(range(len(w)), key=lambda i: (w[i], -i))
    return {"best": w[j], "best_at": lo + j, "mean": sum(w) / len(w), "drop": w[j] - w[-1]}


def retained_share(curve: list, lo: int, hi: int, late: int) -> float:
    """The share of its peak over ks[lo..hi] that a curve keeps at high embedding dimension: the
    mean over the window's upper part ks[late..hi] over the best of ks[lo..hi] (1: it saturates,
    keeps all; 0: lost). A curve at 0 throughout has no analogy structure to keep: 0."""
    best = max(curve[lo:hi + 1])
    w = curve[late:hi + 1]
    return (sum(w) / len(w)) / best if best > 0 else 0.0


WINDOW_KEYS = ("best_diff", "mean_diff", "drop_margin", "retained_margin")


def window_block(curves: dict, ks: list, K: int) -> dict:
    """(iii) over the window k in [K+1, 3K], per setting ({setting: (log M curve, M curve)} over
    ``ks``): each curve's best and its k, mean, drop from the peak to k = 3K (absolute and as a
    share of the peak), mean over the window's upper half [2K+1, 3K] and the share of the peak it
    keeps (:func:`retained_share`); then log M - M of the best and the mean, M's drop - log M's
    (``drop_margin``) and log M's kept share - M's (``retained_margin``). The minimum over the
    settings of each, and (``sampled``) over the sampled settings alone."""
    i1, i3 = ks.index(K + 1), ks.index(3 * K)
    late = ks.index(2 * K + 1)
    settings = {}
    for setting, (L, M) in curves.items():
        st = {"logM_acc_K1": L[i1], "M_acc_K1": M[i1], "logM_acc_3K": L[i3], "M_acc_3K": M[i3]}
        for mat, curve in (("logM", L), ("M", M)):
            w = window_stats(curve, i1, i3)
            st.update({f"{mat}_best": w["best"], f"{mat}_best_k": ks[w["best_at"]],
                       f"{mat}_mean": w["mean"], f"{mat}_drop": w["drop"],
                       f"{mat}_drop_of_peak": w["drop"] / w["best"] if w["best"] > 0 else None,
                       f"{mat}_late_mean": sum(curve[late:i3 + 1]) / (i3 + 1 - late),
                       f"{mat}_retained": retained_share(curve, i1, i3, late)})
        st["best_diff"] = st["logM_best"] - st["M_best"]
        st["mean_diff"] = st["logM_mean"] - st["M_mean"]
        st["drop_margin"] = st["M_drop"] - st["logM_drop"]
        st["retained_margin"] = st["logM_retained"] - st["M_retained"]
        settings[setting] = st
    block: dict = {"settings": settings, "late": [2 * K + 1, 3 * K]}

    def mins(names):
        out = {}
        for key in WINDOW_KEYS:
            worst = min(names, key=lambda n: settings[n][key])
            out[f"{key}_min"] = settings[worst][key]
            out[f"{key}_argmin"] = worst
        return out

    block.update(mins(list(settings)))
    sampled = [n for n in settings if n.startswith("sampled_")]
    if sampled:
        block["sampled"] = mins(sampled)
    return block


def paper_set_metrics(res: dict, scoring: str) -> dict:
    """(iii) and (iv) on the paper's analogy sets T(k1, k2) (Sec. 6).

    (iii): log M - M at every k >= K+1, exact model and sampled corpora (``logm_minus_m``), and
    over k in [K+1, 3K] on each of the four settings (exact and sampled, both spreads;
    :func:`window_block`). (iv): :func:`removal_exact_metrics` (the paper's Sec. 9 removal) and
    :func:`removal_sampled_metrics` (the corpus removal on the small sampled corpus)."""
    K, ks = res["K"], res["ks"]
    i1 = ks.index(K + 1)
    out: dict = {"n_analogies": res["n_paper_set"], "base_words_per_pair": res["pair_base_words"],
                 "window": [K + 1, 3 * K]}
    diffs, curves, acc_k1 = [], {}, {}
    for name, r in res["spreads"].items():
        for source in ("exact", "sampled"):
            L, M = (r[source]["paper_set"][mat][scoring] for mat in ("logM", "M"))
            diffs += [(L[i] - M[i], ks[i], source, name) for i in range(i1, len(ks))]
            curves[f"{source}_{name}"] = (L, M)
            acc_k1[f"{source}_{name}"] = L[i1]
    out["window"] = window_block(curves, ks, K)
    out["exact_logM_acc_K1_min"] = min(v for n, v in acc_k1.items() if n.startswith("exact_"))

    lmm: dict = {"ks_from": ks[i1], "ks_to": ks[-1]}
    for source in ("exact", "sampled", None):
        ds = [d for d in diffs if source is None or d[2] == source]
        worst = min(ds)
        bad = sorted({d[1] for d in ds if d[0] < 0})
        entry = {"min_k_ge_K1": worst[0], "argmin_k_ge_K1": {"k": worst[1], "source": worst[2], "corpus": worst[3]},
                 "min_k_ge_K3": min(d for d in ds if d[1] >= K + 3)[0],
                 "holds_through_k": ks[-1] if not bad else max([k for k in ks[i1:] if k < bad[0]], default=None)}
        if source is None:
            lmm.update(entry)
        else:
            lmm[source] = entry
    out["logm_minus_m"] = lmm
    out["removal_exact"] = removal_exact_metrics(res["removal_exact"], K, scoring)
    out["removal_sampled"] = removal_sampled_metrics(res["removal"], K, res["V"], scoring)
    return out


def control_metrics(res: dict, scoring: str) -> dict:
    """The control of the (iii) checks, the attribute mixture of the same p_k and s_k (each pair
    correlated through one attribute: the attributes add up in M instead of multiplying), by the
    same window figures (:func:`window_block`) on its exact model and its sampled corpora."""
    K = res["K"]
    curves, ks = {}, None
    for name, r in res["control"].items():
        for source in ("exact", "sampled"):
            c = r[source]
            ks = c["ks"]
            curves[f"{source}_{name}"] = (c["paper_set"]["logM"][scoring], c["paper_set"]["M"][scoring])
    out = {"paper_set": {"window": window_block(curves, ks, K)}}
    out["exact_M_rank"] = {name: r["exact"]["M_rank"] for name, r in res["control"].items()}
    return out


def seed_view(res: dict, seed) -> dict:
    """One verdict seed's results in the layout the metrics read: the shared exact-model curves,
    removal and real text beside the seed's own sampled curves, removal ablation, noise sweep
    and control corpora."""
    r, sh = res["per_seed"][str(seed)], res["shared"]
    spreads = {name: {"exact": sh["spreads"][name]["exact"], "sampled": r["spreads"][name]["sampled"],
                      "corpus": r["spreads"][name]["corpus"]} for name in res["spread_order"]}
    control = {name: {"exact": sh["control"][name]["exact"], "sampled": r["control"][name]["sampled"],
                      "corpus": r["control"][name]["corpus"]} for name in res["spread_order"]}
    return {**{k: res[k] for k in ("K", "V", "ks", "n_paper_set", "pair_base_words", "saturation_corpus")},
            "spreads": spreads, "control": control, "removal": r["removal"],
            "removal_exact": sh["removal_exact"], "noise": r["noise"]}


def seed_metrics(view: dict) -> dict:
    """Every figure of one verdict seed (the claims read these per seed)."""
    m = {**claim_metrics(view, "eq13"), "exclude_abc": claim_metrics(view, "3cosadd"),
         "control": control_metrics(view, "eq13"), "noise": noise_metrics(view["noise"], "eq13")}
    m["control"]["exclude_abc"] = control_metrics(view, "3cosadd")
    for name, r in view["spreads"].items():
        m["exact"][name]["logM_rank"] = r["exact"]["logM_rank"]
        m["sampled"][name]["zero_cells"] = r["corpus"]["zero_cells"]
        m["sampled"][name]["pairs"] = r["corpus"]["pairs"]
    for name, r in view["control"].items():
        m["control"][f"zero_cells_{name}"] = r["corpus"]["zero_cells"]
    return m


def removal_exact_metrics(rx: dict, K: int, scoring: str) -> dict:
    """(iv) as the paper tests it (Sec. 9, Fig. 3c): on the exact model, log M' = 0 on the pairs
    of the strongest or the weakest attribute; T analogies that involve the pruned attribute
    ("pruned") and those that do not ("unpruned"): the pruned ones' accuracy at k = K+1 ("perfect
    accuracy appearing at K = d"; our K+1 counts the constant mode), and pruned / unpruned at
    every k in [K+1, 3K] ("perform similarly")."""
    settings = {}
    for name, r in rx.items():
        ks = r["ks"]
        j1, j3 = ks.index(K + 1), ks.index(3 * K)
        for label, e in r["pruned"].items():
            inv, oth = e["after"]["involving"][scoring], e["after"]["other"][scoring]
            ratios = [(inv[j] / oth[j], ks[j]) for j in range(j1, j3 + 1) if oth[j] > 0]
            worst = min(ratios) if ratios else (None, None)
            settings[f"{name}_{label}"] = {
                "relation": e["relation"], "n_pruned": e["n_involving"], "n_unpruned": e["n_other"],
                "pruned_before_K1": e["before"]["involving"][scoring][j1],
                "pruned_K1": inv[j1], "unpruned_K1": oth[j1], "pruned_3K": inv[j3], "unpruned_3K": oth[j3],
                "pruned_min_K1_3K": min(inv[j1:j3 + 1]), "ratio_min": worst[0], "ratio_argmin_k": worst[1]}
    ratios = [v["ratio_min"] for v in settings.values() if v["ratio_min"] is not None]
    return {"settings": settings,
            "pruned_acc_K1_min": min(v["pruned_K1"] for v in settings.values()),
            "pruned_over_unpruned_min": min(ratios) if len(ratios) == len(settings) else None,
            "pruned_min_K1_3K": min(v["pruned_min_K1_3K"] for v in settings.values()),
            "unpruned_K1_min": min(v["unpruned_K1"] for v in settings.values())}


def removal_sampled_metrics(rm: dict, K: int, V: int, scoring: str) -> dict:
    """(iv) on the small sampled corpus, T analogies that involve the relation, per relation and
    at every k in [2K, 3K] (the claim's window): the accuracy after removing the relation's
    co-occurrences from the corpus over the accuracy before (minimum over relations and k) and
    over chance 1/V; the same for log M-hat with the cells set to 0 instead (``pruned``, the
    paper's Sec. 9 removal on the sampled matrix); pooled curves for the plot."""
    rows = [r for r in rm["relations"] if "paper_set" in r]
    if not rows:
        return {}
    ks = rm["ks"]
    window = [j for j, k in enumerate(ks) if 2 * K <= k <= 3 * K]
    j1 = ks.index(K + 1)
    out: dict = {"chance": 1.0 / V, "window": [2 * K, 3 * K]}
    for mat, kind in (("logM", "after"), ("M", "after"), ("logM", "pruned")):
        per, ratio, over = [], [], []
        for r in rows:
            ps = r["paper_set"]
            b, a = ps["before"][mat][scoring], ps[kind][mat][scoring]
            per.append({"relation": r["relation"], "before_K1": b[j1], "after_K1": a[j1],
                        "before_mean_2K_3K": sum(b[j] for j in window) / len(window),
                        "after_mean_2K_3K": sum(a[j] for j in window) / len(window)})
            ratio += [(a[j] / b[j], ks[j], r["relation"]) for j in window if b[j] > 0]
            over += [(a[j] * V, ks[j], r["relation"]) for j in window]
        w = [r["paper_set"]["n_analogies"] for r in rows]
        pooled = {when: [sum(wi * r["paper_set"][when][mat][scoring][j] for wi, r in zip(w, rows)) / sum(w)
                         for j in range(len(ks))] for when in ("before", kind)}
        worst_r, worst_o = min(ratio), min(over)
        out[f"{mat}_{kind}" if kind == "pruned" else mat] = {
            "ratio_min": worst_r[0], "ratio_argmin": {"k": worst_r[1], "relation": worst_r[2]},
            "after_over_chance_min": worst_o[0], "per_relation": per,
            "before": pooled["before"], "after": pooled[kind],
            "before_mean_2K_3K": sum(pooled["before"][j] for j in window) / len(window),
            "after_mean_2K_3K": sum(pooled[kind][j] for j in window) / len(window),
            "before_K1": pooled["before"][j1], "after_K1": pooled[kind][j1]}
    out["ratio_min"] = out["logM"]["ratio_min"]
    out["after_over_chance_min"] = out["logM"]["after_over_chance_min"]
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


def _mean_curves(curves: list) -> list:
    """The mean over seeds of same-length curves."""
    return [sum(v) / len(v) for v in zip(*curves)]


def main() -> None:
    with stage("attr_analogy", "evaluate", AttrParams) as ctx:
        import json
        import time

        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics

        from .model import wilson_interval

        t0 = time.perf_counter()
        res = json.loads(ctx.path(RESULTS).read_text())
        K, ks = res["K"], res["ks"]
        seeds = [int(s) for s in res["per_seed"]]
        if seeds != list(ctx.seeds):
            raise ValueError(f"data/attr_analogy/results.json holds seeds {seeds}, the profile's verdict seeds "
                             f"are {list(ctx.seeds)}: run `dvc repro stages/attr_analogy/dvc.yaml:attr_analogy-train`")
        views = {s: seed_view(res, s) for s in seeds}
        per = {}
        for s in seeds:
            per[s] = seed_metrics(views[s])
            print(f"    seed {s}: metrics ({time.perf_counter() - t0:.1f}s)", flush=True)
        m = per_seed_metrics(per, K=K, V=res["V"], n_analogies=res["n_analogies"], power=res["power"],
                             analogy_seed=res["analogy_seed"],
                             realtext=realtext_metrics(res["shared"]["realtext"], ctx.params.evaluate.k_report,
                                                       ctx.params.evaluate.ci_level))
        write_json(ctx.path(METRICS), m)

        # ---- accuracy vs k ------------------------------------------------------------
        names = res["spread_order"]

        def sampled_mean(name, part, mat, sc):
            return _mean_curves([views[s]["spreads"][name]["sampled"][part][mat][sc] if part
                                 else views[s]["spreads"][name]["sampled"][mat][sc] for s in seeds])

        fig, axes = new_figure(2, len(names), figsize=(5.4 * len(names), 8.5), squeeze=False)
        colours = {"M": "tab:blue", "logM": "tab:orange"}
        for col, name in enumerate(names):
            for row, source in enumerate(("exact", "sampled")):
                ax = axes[row][col]
                for mat in MATS:
                    for part, sc, style, what in (("paper_set", "eq13", "-", "paper's T(k1,k2), Eq. 13"),
                                                  ("paper_set", "3cosadd", ":", "T(k1,k2), excl. a,b,c"),
                                                  (None, "eq13", "--", "flips, Eq. 13")):
                        if source == "exact":
                            r = res["shared"]["spreads"][name]["exact"]
                            y = (r[part] if part else r)[mat][sc]
                        else:
                            y = sampled_mean(name, part, mat, sc)
                        ax.plot(ks, y, style, color=colours[mat], lw=1.6 if style == "-" else 1.0,
                                label=f"{'log M' if mat == 'logM' else 'M'}: {what}")
                    if source == "sampled":
                        for s in seeds:
                            ax.plot(ks, views[s]["spreads"][name]["sampled"]["paper_set"][mat]["eq13"], "-",
                                    color=colours[mat], lw=0.4, alpha=0.5)
                ax.axvline(K + 1, color="grey", lw=0.8, ls=":")
                ax.axvspan(K + 1, 3 * K, color="grey", alpha=0.08)
                ax.set_xscale("log")
                ax.set_ylim(-0.02, 1.02)
                extra = (f", {r_pairs(res, name)} pairs, mean of {len(seeds)} seeds (thin: each seed, T set)"
                         if source == "sampled" else "")
                ax.set_title(f"{source} model, {name} s_k spread{extra}", fontsize=9)
                ax.set_xlabel("k (top eigenvectors kept)")
                ax.set_ylabel("analogy accuracy")
                ax.grid(True, alpha=0.3)
        axes[0][0].legend(fontsize=7)
        fig.suptitle(f"Analogy accuracy, K = {K} attributes (dotted line: k = K+1; band: K+1..3K, the (iii) window)")
        fig.tight_layout()
        save_png(fig, ctx.path(PLOT_K))
        rows = []
        for i, k in enumerate(ks):
            row = {"k": k}
            for name in names:
                for source in ("exact", "sampled"):
                    for mat in MATS:
                        for sc in ("eq13", "3cosadd"):
                            for part, prefix in ((None, ""), ("paper_set", "paper_set_")):
                                if source == "exact":
                                    r = res["shared"]["spreads"][name]["exact"]
                                    v = (r[part] if part else r)[mat][sc][i]
                                else:
                                    v = sampled_mean(name, part, mat, sc)[i]
                                row[f"{prefix}{source}_{name}_{mat}_{sc}"] = v
            rows.append(row)
        write_csv(ctx.path(CSV_K), rows)

        # ---- the control: the attribute mixture --------------------------------------
        fig, axes = new_figure(1, len(names), figsize=(5.4 * len(names), 4.2), squeeze=False)
        cks = list(range(1, 3 * K + 1))
        crow = [{"k": k} for k in cks]
        for col, name in enumerate(names):
            ax = axes[0][col]
            for mat in MATS:
                ex = res["shared"]["control"][name]["exact"]["paper_set"][mat]["eq13"]
                sa = _mean_curves([views[s]["control"][name]["sampled"]["paper_set"][mat]["eq13"] for s in seeds])
                mod = _mean_curves([views[s]["spreads"][name]["sampled"]["paper_set"][mat]["eq13"][:3 * K]
                                    for s in seeds])
                label = "log M" if mat == "logM" else "M"
                ax.plot(cks, ex, ":", color=colours[mat], label=f"{label}: mixture, exact")
                ax.plot(cks, sa, "-", color=colours[mat], lw=1.6, label=f"{label}: mixture, sampled (mean of seeds)")
                ax.plot(cks, mod, "--", color=colours[mat], lw=0.9, label=f"{label}: the model, sampled (mean of seeds)")
                for row, a, b in zip(crow, ex, sa):
                    row[f"exact_{name}_{mat}_eq13"] = a
                    row[f"sampled_{name}_{mat}_eq13"] = b
            ax.axvspan(K + 1, 3 * K, color="grey", alpha=0.08)
            ax.set_ylim(-0.02, 1.02); ax.grid(True, alpha=0.3)
            ax.set_xlabel("k"); ax.set_ylabel("accuracy (Eq. 13), T(k1,k2)")
            ax.set_title(f"control: attribute mixture, {name} s_k spread, {r_pairs(res, name)} pairs", fontsize=9)
        axes[0][0].legend(fontsize=6)
        fig.tight_layout()
        save_png(fig, ctx.path(PLOT_CONTROL))
        write_csv(ctx.path(CSV_CONTROL), crow)

        # ---- removal ----------------------------------------------------------------
        rm = res["per_seed"][str(seeds[0])]["removal"]
        ps = {mat: {when: _mean_curves([per[s]["paper_set"]["removal_sampled"][mat][when] for s in seeds])
                    for when in ("before", "after")} for mat in (*MATS, "logM_pruned")}
        rf = {mat: {when: _mean_curves([per[s]["removal"][mat][when] for s in seeds])
                    for when in ("before", "after")} for mat in MATS}
        fig, axes = new_figure(1, 2, figsize=(13, 4.4))
        ax = axes[0]
        for mat in MATS:
            ax.plot(rm["ks"], ps[mat]["before"], "-o", ms=3, color=colours[mat],
                    label=f"{'log M' if mat == 'logM' else 'M'}, T(k1,k2): before")
            ax.plot(rm["ks"], ps[mat]["after"], "--s", ms=3, color=colours[mat],
                    label=f"{'log M' if mat == 'logM' else 'M'}, T(k1,k2): after removing the relation's pairs")
            ax.plot(rm["ks"], rf[mat]["after"], ":", color=colours[mat], lw=1.0,
                    label=f"{'log M' if mat == 'logM' else 'M'}, flips: after (before: thin)")
            ax.plot(rm["ks"], rf[mat]["before"], "-", color=colours[mat], lw=0.6)
        ax.plot(rm["ks"], ps["logM_pruned"]["after"], "-.", color="tab:red", lw=1.2,
                label="log M, T(k1,k2): log M-hat = 0 on the pairs (paper's Sec. 9)")
        ax.axvspan(2 * K, 3 * K, color="grey", alpha=0.1, label="window [2K, 3K]")
        ax.set_xlabel("k"); ax.set_ylabel("accuracy on analogies involving the relation (Eq. 13)")
        ax.set_title(f"Pair removal, sampled corpus of {rm['pairs']} pairs, "
                     f"{len(rm['relations'])} relations pooled, mean of {len(seeds)} seeds", fontsize=9)
        ax.set_ylim(-0.02, 1.02); ax.grid(True, alpha=0.3); ax.legend(fontsize=6)
        ax = axes[1]
        rx = res["shared"]["removal_exact"]
        styles = {"strongest": "-", "weakest": "--"}
        spread_colours = dict(zip(names, ("tab:green", "tab:purple", "tab:brown", "tab:olive")))
        ex_rows = [{"k": k} for k in range(1, 3 * K + 1)]
        for name in names:
            for label, e in rx[name]["pruned"].items():
                for part, lw in (("involving", 1.6), ("other", 0.8)):
                    curve = e["after"][part]["eq13"]
                    ax.plot(rx[name]["ks"], curve, styles[label], lw=lw, color=spread_colours[name],
                            label=f"{name}, {label} (attr {e['relation']}) pruned: "
                                  f"{'analogies involving it' if part == 'involving' else 'the others'}")
                    for row, v in zip(ex_rows, curve):
                        row[f"{name}_{label}_{part}_eq13"] = v
                    for row, v in zip(ex_rows, e["after"][part]["3cosadd"]):
                        row[f"{name}_{label}_{part}_3cosadd"] = v
        ax.axvline(K + 1, color="grey", lw=0.8, ls=":")
        ax.axvspan(K + 1, 3 * K, color="grey", alpha=0.08)
        ax.set_xlabel("k"); ax.set_ylabel("accuracy (Eq. 13), T(k1,k2)")
        ax.set_title("Paper's removal (Sec. 9, Fig. 3c): exact log M' = 0 on one attribute's pairs", fontsize=9)
        ax.set_ylim(-0.02, 1.02); ax.grid(True, alpha=0.3); ax.legend(fontsize=6)
        save_png(fig, ctx.path(PLOT_REMOVAL))
        write_csv(ctx.path(CSV_REMOVAL), [
            {"k": k, **{f"{mat}_{when}": rf[mat][when][j] for mat in MATS for when in ("before", "after")},
             **{f"paper_set_{mat}_{when}": ps[mat][when][j] for mat in MATS for when in ("before", "after")},
             "paper_set_logM_pruned": ps["logM_pruned"]["after"][j]}
            for j, k in enumerate(rm["ks"])])
        write_csv(ctx.path(CSV_REMOVAL_EXACT), ex_rows)

        # ---- noise (mean over the seeds) ------------------------------------------------
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
        fig.suptitle(f"Noise robustness, exact model of the {res['per_seed'][str(seeds[0])]['noise']['spread']} "
                     f"spread, mean of {len(seeds)} seeds", fontsize=10)
        save_png(fig, ctx.path(PLOT_NOISE))

        # ---- real text (no draw: the same for every seed) ---------------------------
        rt, mr = res["shared"]["realtext"], m["realtext"]
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

        for key in ("exact", "saturation", "logm_minus_m", "paper_set", "control"):
            ctx.run.log_dict(m[key], f"metrics_{key}.json")
        for s in seeds:
            ps_s, c_s = per[s]["paper_set"], per[s]["control"]["paper_set"]["window"]["sampled"]
            w = ps_s["window"]["sampled"]
            print(f"  seed {s}: (iii) sampled, T(k1,k2), [K+1, 3K]: mean log M - M {w['mean_diff_min']:+.4f} "
                  f"(control {c_s['mean_diff_min']:+.4f}), kept share of the peak log M - M "
                  f"{w['retained_margin_min']:+.4f} (control {c_s['retained_margin_min']:+.4f}); "
                  f"(ii) {per[s]['saturation']['logM_min_K1_2K']:.3f}; (iv) sampled after/before min "
                  f"{ps_s['removal_sampled']['ratio_min']:.3f}")
        rx_m = per[seeds[0]]["paper_set"]["removal_exact"]
        print(f"  exact model (every seed): (i) {per[seeds[0]]['exact']['logM_acc_K1_min']:.3f}; (iv) pruned at K+1 "
              f"{rx_m['pruned_acc_K1_min']:.3f}, pruned/unpruned min {rx_m['pruned_over_unpruned_min']}; "
              f"real text log M: {mr['logM']['eq13']['hits']}/{mr['covered']}")


def r_pairs(res: dict, name: str) -> str:
    n = res["truth"][name]["pairs"]
    return f"{n / 1e6:g}M" if n >= 1e6 else f"{n / 1e3:g}k"


if __name__ == "__main__":
    main()
