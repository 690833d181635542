"""w2v_quartic evaluate: closed form, predicted step times, effective rank and its plateaus,
subspace overlaps, downstream scores (synthetic retrieval, real-text analogies and word
similarity), plots. reports/w2v_quartic/metrics.json is what claims.yaml reads.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import ROLES, W2VParams
from .paths import (CSV_RANK, CSV_SCORES, CSV_TIMES, METRICS, PLOT_DYNAMICS, PLOT_OVERLAP, PLOT_SCORES, PLOT_TIMES, RUNS,
                    corpus_dir)

METHODS = ("closed_form", "quartic", "sgns", "gensim")
W2V_METHODS = ("quartic_w2v", "sgns_w2v")     # trained with word2vec's pair weights (where run)


def load_run(root, role: str) -> dict:
    import numpy as np

    with np.load(root / RUNS / f"{role}.npz") as z:
        return {k: z[k] for k in z.files}


def dynamics_metrics(r: dict, d: int, ep) -> tuple[dict, dict]:
    """Step times (measured vs predicted), effective rank and plateaus, overlaps, for one corpus."""
    import numpy as np
    from scipy.stats import spearmanr

    from . import theory

    lam = r["eigvals"]
    eta = float(r["eta"])
    pred = theory.predicted_steps(lam[:d], r["p0"][:d], eta)
    out, curves = {}, {"predicted": pred}
    learnable = lam[:d] > 0
    for kind in ("quartic", "sgns"):
        steps, proj, sv2 = r[f"{kind}_step"], r[f"{kind}_proj"][:, :d], r[f"{kind}_sv2"]
        # quartic: the theory's final value lambda_k; SGNS (another target): its own final projection
        final = lam[:d] if kind == "quartic" else proj[-1]
        meas = theory.crossing_steps(steps, proj, ep.rank_threshold * final)
        ok = learnable & np.isfinite(meas) & np.isfinite(pred)
        rho = float(spearmanr(meas[ok], pred[ok]).statistic) if ok.sum() >= 3 else None
        rank = theory.effective_rank(sv2, ep.rank_threshold)
        pl = theory.plateaus(steps, rank, theory.resolvable_levels(lam, d, ep.min_rel_gap),
                             ep.plateau_min_frac)
        ratio = meas[ok] / pred[ok]
        out[kind] = {
            "spearman_step_times": rho, "directions_timed": int(ok.sum()),
            "median_measured_over_predicted": float(np.median(ratio)) if ok.any() else None,
            "max_abs_log_ratio": float(np.abs(np.log(ratio)).max()) if ok.any() else None,
            "n_plateaus": pl["n_plateaus"], "skipped_levels": len(pl["skipped_levels"]),
            "final_rank": pl["final_rank"], "max_rank_jump": pl["max_jump"],
            "rank_monotone": pl["monotone"], "steps_to_final_rank": pl["steps_to_final_rank"],
            "rank_levels": pl["levels_in_order"],
            "overlap_final": float(r[f"{kind}_overlap"][-1]),
            "final_loss": float(r[f"{kind}_loss"][-1]),
        }
        curves[kind] = {"measured": meas, "rank": rank, "plateaus": pl["plateaus"]}
    out["resolvable_levels"] = theory.resolvable_levels(lam, d, ep.min_rel_gap).tolist()
    out["eigvals_top"] = [float(x) for x in lam[: d + 1]]
    out["rel_gaps_top"] = [float((lam[k] - lam[k + 1]) / abs(lam[k])) for k in range(d)]
    out["eta"] = eta
    out["predicted_steps"] = [None if not np.isfinite(x) else float(x) for x in pred]
    out["gensim_overlap_mean"] = float(np.mean([theory.subspace_overlap(E, r["eigvecs"][:, :d])
                                                for E in r["gensim_E"]]))
    return out, curves


def w2v_metrics(r: dict, d: int) -> dict:
    """The word2vec-weighted runs: the eigenvalues of G o M* (the linearised dynamics near 0),
    step, final overlap with its top-d eigenvectors, final sigma_k^2, convergence."""
    import numpy as np

    out = {"eig_top_GM": [float(x) for x in r["w2v_eigvals"][: d + 1]], "eta": float(r["w2v_eta"])}
    for kind in ("quartic", "sgns"):
        if f"w2v_{kind}_W" in r:
            out[f"overlap_final_{kind}"] = float(r[f"w2v_{kind}_overlap"][-1])
            out[f"final_loss_{kind}"] = float(r[f"w2v_{kind}_loss"][-1])
            out[f"final_sv2_{kind}"] = [float(x) for x in r[f"w2v_{kind}_sv2"][-1]]
            out[f"final_rel_grad_{kind}"] = float(r[f"w2v_{kind}_rel_grad"])
            out[f"steps_{kind}"] = int(np.asarray(r[f"w2v_{kind}_step"])[-1])
    return out


def embeddings(r: dict, d: int) -> dict:
    """Final embeddings per method (gensim: one per seed)."""
    from . import theory

    out = {"closed_form": [theory.closed_form(r["eigvals"][:d], r["eigvecs"][:, :d])],
           "quartic": [r["quartic_W"]], "sgns": [r["sgns_W"]], "gensim": list(r["gensim_E"])}
    for kind in ("quartic", "sgns"):
        if f"w2v_{kind}_W" in r:
            out[f"{kind}_w2v"] = [r[f"w2v_{kind}_W"]]
    return out


def score_all(embeds: dict, fn) -> dict:
    import numpy as np

    out = {}
    for m, Es in embeds.items():
        vals = [fn(E) for E in Es]
        out[m] = float(np.mean(vals))
        if m == "gensim":
            out["gensim_seeds"] = [float(v) for v in vals]
            out["gensim_std"] = float(np.std(vals, ddof=1)) if len(vals) > 1 else 0.0
    return out


def compare_to_gensim(s: dict, ep, quartic: str = "quartic", sgns: str = "sgns") -> dict:
    """The STUDIES.md check: |quartic - gensim| against max(tolerance_abs, k x gensim's std)
    (``quartic``/``sgns``: which trained models; the word2vec-weighted ones are ``*_w2v``)."""
    gap = abs(s[quartic] - s["gensim"])
    tol = max(ep.tolerance_abs, ep.tolerance_spread_multiple * s["gensim_std"])
    return {"quartic": s[quartic], "gensim_mean": s["gensim"], "gensim_std": s["gensim_std"],
            "sgns": s[sgns], "closed_form": s["closed_form"], "abs_gap_quartic_gensim": gap,
            "quartic_minus_gensim": s[quartic] - s["gensim"],
            "tolerance": tol, "gap_over_tolerance": gap / tol,
            "abs_gap_quartic_sgns": abs(s[quartic] - s[sgns])}


def main() -> None:
    with stage("w2v_quartic", "evaluate", W2VParams) as ctx:
        import numpy as np
        from tqdm import tqdm

        from stages.common.corpora.realtext import gensim_data
        from stages.common.io import write_json

        from stages.common.corpora import load_analogy_table, load_corpus
        from stages.common.device import limit_threads

        from . import scores

        limit_threads()
        ep, tp = ctx.params.evaluate, ctx.params.train
        runs = {role: load_run(ctx.root, role) for role in tqdm(ROLES, desc="loading runs")}
        m: dict = {}

        # --- learning dynamics on every corpus (the claims read the dynamics corpus) ---
        curves = {}
        for role in ROLES:
            m[role], curves[role] = dynamics_metrics(runs[role], getattr(tp, role).dim, ep)
        for kind in ("quartic", "sgns"):
            ctx.run.log_curve(f"dynamics.{kind}.effective_rank", curves["dynamics"][kind]["rank"],
                              runs["dynamics"][f"{kind}_step"])

        # --- synthetic retrieval scores (the topic corpora) ---
        for role in ("dynamics", "downstream", "downstream_rich"):
            rp = getattr(tp, role)
            c = load_corpus(ctx.path(corpus_dir(rp)))
            keep = runs[role]["keep"]
            topic = np.asarray(c.word_truth["topic"])[keep]
            topic2 = np.asarray(c.word_truth.get("topic2", [-1] * len(c.vocab)))[keep]
            emb = embeddings(runs[role], rp.dim)
            m[role]["retrieval"] = score_all(
                emb, lambda E: scores.retrieval_precision(E, topic, topic2, ep.retrieval_k))
            # the same score over the rarer and the more frequent half of the words
            counts = np.asarray(c.word_counts)[keep]
            rare = counts < np.median(counts)
            for half, mask in (("rare_half", rare), ("frequent_half", ~rare)):
                m[role]["retrieval"][half] = score_all(
                    emb, lambda E: float(scores.retrieval_per_word(E, topic, topic2, ep.retrieval_k)[mask].mean()))
            m[role]["zero_cells_share"] = float((c.counts[keep][:, keep].toarray() == 0).mean())
        for role in ("downstream", "downstream_rich"):
            m[role]["score"] = {"metric": f"precision@{ep.retrieval_k} (neighbour shares a topic)",
                                **compare_to_gensim(m[role]["retrieval"], ep)}
            if "quartic_w2v" in m[role]["retrieval"]:
                m[role]["score_word2vec_weights"] = {
                    "metric": f"precision@{ep.retrieval_k}; the quartic model with word2vec's pair weights",
                    **compare_to_gensim(m[role]["retrieval"], ep, "quartic_w2v",
                                        "sgns_w2v" if "sgns_w2v" in m[role]["retrieval"] else "quartic_w2v")}
                del m[role]["score_word2vec_weights"]["closed_form"]     # no closed form with these weights
        for role in ROLES:
            if "w2v_quartic_W" in runs[role]:
                m[role]["word2vec_weights"] = w2v_metrics(runs[role], getattr(tp, role).dim)
        s = m["downstream"]["retrieval"]

        # --- real text: analogies and word similarity on the kept vocabulary (a proxy) ---
        rp = tp.realtext
        rc = load_corpus(ctx.path(corpus_dir(rp)))
        keep = runs["realtext"]["keep"]
        index = {rc.vocab[i]: n for n, i in enumerate(keep)}
        an = load_analogy_table(ctx.path(corpus_dir(rp)) / "analogies")
        qs = np.array([[index[w] for w in (a, b, c_, d_)]
                       for a, b, c_, d_ in zip(an["a"], an["b"], an["c"], an["d"])
                       if all(w in index for w in (a, b, c_, d_))], dtype=np.int64).reshape(-1, 4)
        ws = [(index[a], index[b], r) for a, b, r in scores.read_wordsim(gensim_data("wordsim353.tsv"))
              if a in index and b in index]
        pairs = np.array([(a, b) for a, b, _ in ws], dtype=np.int64).reshape(-1, 2)
        ratings = np.array([r for _, _, r in ws], dtype=float)
        emb = embeddings(runs["realtext"], rp.dim)
        m["realtext"]["analogy"] = {"questions": int(len(qs)),
                                    **score_all(emb, lambda E: scores.analogy_accuracy(E, qs))}
        m["realtext"]["analogy_vs_gensim"] = compare_to_gensim(m["realtext"]["analogy"], ep)
        m["realtext"]["wordsim"] = {"pairs": int(len(pairs)),
                                    **score_all(emb, lambda E: scores.similarity_spearman(E, pairs, ratings))}
        gaps = m["realtext"]["rel_gaps_top"]
        m["realtext"]["median_rel_gap_top"] = float(np.median(gaps))

        # --- what the claims read (flat keys) ---
        dq, ds = m["dynamics"]["quartic"], m["dynamics"]["sgns"]
        m["claims"] = {
            "quartic_plateaus": dq["n_plateaus"], "sgns_plateaus": ds["n_plateaus"],
            "quartic_skipped_levels": dq["skipped_levels"], "sgns_skipped_levels": ds["skipped_levels"],
            "quartic_max_rank_jump": dq["max_rank_jump"],
            "quartic_overlap": dq["overlap_final"], "sgns_overlap": ds["overlap_final"],
            "quartic_spearman": dq["spearman_step_times"], "sgns_spearman": ds["spearman_step_times"],
            "gensim_downstream": s["gensim"], "quartic_downstream": s["quartic"],
            "downstream_gap_over_tolerance": m["downstream"]["score"]["gap_over_tolerance"],
            "downstream_abs_gap": m["downstream"]["score"]["abs_gap_quartic_gensim"],
            "downstream_tolerance": m["downstream"]["score"]["tolerance"],
            "sgns_downstream": s["sgns"], "closed_form_downstream": s["closed_form"],
            "rich_gensim_downstream": m["downstream_rich"]["retrieval"]["gensim"],
            "rich_quartic_downstream": m["downstream_rich"]["retrieval"]["quartic"],
            "rich_gap_over_tolerance": m["downstream_rich"]["score"]["gap_over_tolerance"],
            "rich_quartic_minus_gensim": m["downstream_rich"]["score"]["quartic_minus_gensim"],
            "realtext_analogy_gap_over_tolerance": m["realtext"]["analogy_vs_gensim"]["gap_over_tolerance"],
            "realtext_analogy_quartic": m["realtext"]["analogy"]["quartic"],
            "realtext_analogy_gensim": m["realtext"]["analogy"]["gensim"],
            "realtext_wordsim_quartic": m["realtext"]["wordsim"]["quartic"],
            "realtext_wordsim_gensim": m["realtext"]["wordsim"]["gensim"],
            "realtext_quartic_overlap": m["realtext"]["quartic"]["overlap_final"],
        }
        for role, key in (("downstream_rich", "rich_w2v"), ("downstream", "sparse_w2v")):
            if "score_word2vec_weights" in m[role]:
                sw = m[role]["score_word2vec_weights"]
                m["claims"].update({f"{key}_quartic_downstream": sw["quartic"],
                                    f"{key}_gap_over_tolerance": sw["gap_over_tolerance"],
                                    f"{key}_quartic_minus_gensim": sw["quartic_minus_gensim"],
                                    f"{key}_quartic_rel_grad": m[role]["word2vec_weights"]["final_rel_grad_quartic"]})
        write_json(ctx.path(METRICS), m)
        plots(ctx, runs, curves, m, tp)
        c = m["claims"]
        print(f"  dynamics: plateaus quartic={c['quartic_plateaus']} sgns={c['sgns_plateaus']}; overlap "
              f"quartic={c['quartic_overlap']:.3f} sgns={c['sgns_overlap']:.3f}; Spearman quartic="
              f"{c['quartic_spearman']} sgns={c['sgns_spearman']}")
        print(f"  downstream precision@{ep.retrieval_k}: quartic={s['quartic']:.3f} sgns={s['sgns']:.3f} "
              f"gensim={s['gensim']:.3f}±{s['gensim_std']:.3f} closed={s['closed_form']:.3f}; "
              f"gap/tolerance={c['downstream_gap_over_tolerance']:.2f} (sparse counts)")
        r = m["downstream_rich"]["retrieval"]
        print(f"  downstream_rich precision@{ep.retrieval_k} (checked): quartic={r['quartic']:.3f} "
              f"sgns={r['sgns']:.3f} gensim={r['gensim']:.3f}±{r['gensim_std']:.3f} "
              f"closed={r['closed_form']:.3f}; gap/tolerance={c['rich_gap_over_tolerance']:.2f}")
        if "score_word2vec_weights" in m["downstream_rich"]:
            sw = m["downstream_rich"]["score_word2vec_weights"]
            print(f"  downstream_rich, word2vec weights: quartic={sw['quartic']:.3f} sgns={sw['sgns']:.3f} "
                  f"gensim={sw['gensim_mean']:.3f}; gap/tolerance={sw['gap_over_tolerance']:.2f}")
        print(f"  real text ({len(qs)} analogies, {len(pairs)} wordsim pairs): analogy quartic="
              f"{c['realtext_analogy_quartic']:.3f} gensim={c['realtext_analogy_gensim']:.3f}; wordsim "
              f"quartic={c['realtext_wordsim_quartic']:.3f} gensim={c['realtext_wordsim_gensim']:.3f}")


def plots(ctx, runs, curves, m, tp) -> None:
    import matplotlib
    import numpy as np

    from stages.common.plots import new_figure, save_png, write_csv

    r, cv = runs["dynamics"], curves["dynamics"]
    d = tp.dynamics.dim
    pred = cv["predicted"]
    colours = [matplotlib.colormaps["viridis"](k / max(d - 1, 1)) for k in range(d)]

    # 1. sigma_k^2 over time and the effective rank, predicted step times marked
    fig, axes = new_figure(1, 2, figsize=(12, 4.5))
    for kind, style in (("quartic", "-"), ("sgns", "--")):
        steps, sv2 = r[f"{kind}_step"], r[f"{kind}_sv2"]
        for k in range(d):
            axes[0].semilogy(steps, sv2[:, k], style, color=colours[k], lw=1.3,
                             label=(f"{kind} σ_k²" if k == 0 else None))
        axes[1].step(steps, cv[kind]["rank"], where="post", ls=style, lw=1.6, label=f"{kind} effective rank")
    for k in range(d):
        if np.isfinite(pred[k]):
            for ax in axes:
                ax.axvline(pred[k], color=colours[k], ls=":", lw=1)
        axes[0].axhline(r["eigvals"][k], color=colours[k], ls="-.", lw=0.6, alpha=0.6)
    axes[0].set_ylim(max(float(r["quartic_sv2"].min()), 1e-30), float(r["eigvals"][0]) * 3)
    axes[0].set_xlabel("step"); axes[0].set_ylabel("σ_k² of W (dash-dot: λ_k of M*)")
    axes[0].set_title("σ_k² of W (log scale); dotted: predicted step times τ_k")
    axes[1].set_xlabel("step"); axes[1].set_ylabel("directions above half their final σ²")
    axes[1].set_title(f"effective rank: {m['dynamics']['quartic']['n_plateaus']} plateaus (quartic), "
                      f"{m['dynamics']['sgns']['n_plateaus']} (SGNS)")
    axes[0].legend(fontsize=8); axes[1].legend(fontsize=8)
    save_png(fig, ctx.path(PLOT_DYNAMICS))
    rows = []
    for i, step in enumerate(r["quartic_step"]):
        row = {"step": int(step), "rank_quartic": int(cv["quartic"]["rank"][i]),
               "rank_sgns": int(cv["sgns"]["rank"][i]),
               "overlap_quartic": float(r["quartic_overlap"][i]), "overlap_sgns": float(r["sgns_overlap"][i])}
        row.update({f"log10_sv2_{k + 1}_quartic": float(np.log10(max(r["quartic_sv2"][i, k], 1e-300)))
                    for k in range(d)})
        rows.append(row)
    write_csv(ctx.path(CSV_RANK), rows)

    # 2. measured vs predicted step times
    fig, ax = new_figure(figsize=(5.5, 5))
    for kind, mk in (("quartic", "o"), ("sgns", "s")):
        meas = cv[kind]["measured"]
        ax.scatter(pred, meas, marker=mk, label=f"{kind} (Spearman "
                   f"{m['dynamics'][kind]['spearman_step_times'] or float('nan'):.2f})", alpha=0.8)
    lim = [np.nanmin(pred) * 0.8, np.nanmax(pred) * 1.25]
    ax.plot(lim, lim, "k:", lw=1, label="measured = predicted")
    ax.set_xscale("log"); ax.set_yscale("log")
    ax.set_xlabel("predicted step time τ_k / η"); ax.set_ylabel("measured step (projection reaches half)")
    ax.set_title("learning time of each eigendirection"); ax.legend(fontsize=8)
    save_png(fig, ctx.path(PLOT_TIMES))
    write_csv(ctx.path(CSV_TIMES), [
        {"direction": k + 1, "lambda": float(r["eigvals"][k]), "predicted": float(pred[k]),
         "measured_quartic": float(cv["quartic"]["measured"][k]),
         "measured_sgns": float(cv["sgns"]["measured"][k])} for k in range(d)])

    # 3. subspace overlap over time, every corpus
    fig, ax = new_figure(figsize=(7, 4))
    for role in ROLES:
        rr = runs[role]
        frac = rr["quartic_step"] / max(rr["quartic_step"][-1], 1)
        for kind, style in (("quartic", "-"), ("sgns", "--")):
            ax.plot(frac, rr[f"{kind}_overlap"], style, label=f"{role} {kind}")
    ax.set_xlabel("share of training steps"); ax.set_ylabel("overlap with the closed form's subspace")
    ax.set_ylim(0, 1.02); ax.legend(fontsize=7, ncol=2); ax.set_title("subspace overlap over time")
    save_png(fig, ctx.path(PLOT_OVERLAP))

    # 4. downstream scores
    panels = [("overlap_rich retrieval (checked)", m["downstream_rich"]["retrieval"]),
              ("overlap retrieval (sparse counts)", m["downstream"]["retrieval"]),
              ("dynamics-corpus retrieval", m["dynamics"]["retrieval"]),
              ("real-text analogies", m["realtext"]["analogy"]),
              ("real-text WordSim Spearman", m["realtext"]["wordsim"])]
    fig, axes = new_figure(1, len(panels), figsize=(17, 3.8))
    colours = {"closed_form": "#888", "quartic": "C0", "sgns": "C1", "gensim": "C2",
               "quartic_w2v": "C4", "sgns_w2v": "C5"}
    for ax, (title, s) in zip(axes, panels):
        methods = list(METHODS) + [k for k in W2V_METHODS if k in s]
        vals = [s[k] for k in methods]
        err = [s.get("gensim_std", 0) if k == "gensim" else 0 for k in methods]
        ax.bar(range(len(methods)), vals, yerr=err, color=[colours[k] for k in methods])
        ax.set_xticks(range(len(methods)), methods, rotation=30, fontsize=7)
        ax.set_title(title, fontsize=9)
    save_png(fig, ctx.path(PLOT_SCORES))
    nan = float("nan")
    write_csv(ctx.path(CSV_SCORES), [
        {"method": k, "downstream_retrieval": m["downstream"]["retrieval"].get(k, nan),
         "downstream_rich_retrieval": m["downstream_rich"]["retrieval"].get(k, nan),
         "dynamics_retrieval": m["dynamics"]["retrieval"].get(k, nan),
         "realtext_analogy": m["realtext"]["analogy"].get(k, nan),
         "realtext_wordsim": m["realtext"]["wordsim"].get(k, nan)}
        for k in METHODS + W2V_METHODS])


if __name__ == "__main__":
    main()
