"""w2v_quartic evaluate: closed form, predicted step times, effective rank and its plateaus,
subspace overlaps, downstream scores (synthetic retrieval, real-text analogies and word
similarity), plots. reports/w2v_quartic/metrics.json is what claims.yaml reads: every verdict
seed's figures under ``per_seed`` (``stages.common.seeds.per_seed_metrics``), their means beside
them. The plots and the rank / step-time CSVs show the first verdict seed; scores.csv the means.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import ROLES, W2VParams
from .paths import (CSV_RANK, CSV_SCORES, CSV_TIMES, METRICS, PLOT_DYNAMICS, PLOT_OVERLAP, PLOT_SCORES, PLOT_TIMES, RUNS,
                    corpus_dir, seed_dir)

# plain: the control arm, the factorisation of P - P_i P_j (M* without its normalisation)
METHODS = ("closed_form", "quartic", "sgns", "gensim", "plain")
W2V_METHODS = ("quartic_w2v", "sgns_w2v")     # trained with word2vec's pair weights (where run)


def load_run(root, seed: int, role: str) -> dict:
    import numpy as np

    with np.load(root / RUNS / seed_dir(seed) / f"{role}.npz") as z:
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
           "quartic": [r["quartic_W"]], "sgns": [r["sgns_W"]], "gensim": list(r["gensim_E"]),
           "plain": [r["plain_E"]]}
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
            "minus_gensim_over_tolerance": (s[quartic] - s["gensim"]) / tol,
            "abs_gap_quartic_sgns": abs(s[quartic] - s[sgns])}


def realtext_items(root, tp, keep) -> tuple:
    """The covered analogy questions (ids a, b, c, d) and WordSim-353 pairs (ids, ratings) among
    the kept real-text words."""
    import numpy as np

    from stages.common.corpora import load_analogy_table, load_corpus
    from stages.common.corpora.realtext import gensim_data

    from . import scores

    rc = load_corpus(root / corpus_dir(tp.realtext))
    index = {rc.vocab[i]: n for n, i in enumerate(keep)}
    an = load_analogy_table(root / corpus_dir(tp.realtext) / "analogies")
    qs = np.array([[index[w] for w in (a, b, c_, d_)]
                   for a, b, c_, d_ in zip(an["a"], an["b"], an["c"], an["d"])
                   if all(w in index for w in (a, b, c_, d_))], dtype=np.int64).reshape(-1, 4)
    ws = [(index[a], index[b], r) for a, b, r in scores.read_wordsim(gensim_data("wordsim353.tsv"))
          if a in index and b in index]
    pairs = np.array([(a, b) for a, b, _ in ws], dtype=np.int64).reshape(-1, 2)
    ratings = np.array([r for _, _, r in ws], dtype=float)
    return qs, pairs, ratings


def seed_metrics(runs: dict, tp, ep, realtext: tuple) -> tuple[dict, dict]:
    """Every figure of one verdict seed (``runs``: its role -> arrays) and the curves its plots
    draw. ``realtext``: :func:`realtext_items`."""
    import numpy as np

    from . import scores

    m: dict = {}

    # --- learning dynamics on every corpus (the claims read the dynamics corpus) ---
    curves = {}
    for role in ROLES:
        m[role], curves[role] = dynamics_metrics(runs[role], getattr(tp, role).dim, ep)

    # --- synthetic retrieval scores (the seed's own topic corpora) ---
    for role in ("dynamics", "downstream", "downstream_rich"):
        r = runs[role]
        topic, topic2 = r["topic"], r["topic2"]
        emb = embeddings(r, getattr(tp, role).dim)
        m[role]["retrieval"] = score_all(
            emb, lambda E: scores.retrieval_precision(E, topic, topic2, ep.retrieval_k))
        # the same score over the rarer and the more frequent half of the words
        counts = r["word_counts"]
        rare = counts < np.median(counts)
        for half, mask in (("rare_half", rare), ("frequent_half", ~rare)):
            m[role]["retrieval"][half] = score_all(
                emb, lambda E: float(scores.retrieval_per_word(E, topic, topic2, ep.retrieval_k)[mask].mean()))
    for role in ("downstream", "downstream_rich"):
        m[role]["zero_cells_share"] = float(runs[role]["zero_cells_share"])
        m[role]["score"] = {"metric": f"precision@{ep.retrieval_k} (neighbour shares a topic)",
                            **compare_to_gensim(m[role]["retrieval"], ep)}
        m[role]["score_control"] = {
            "metric": f"precision@{ep.retrieval_k}; the plain factorisation of P - P_i P_j (the control)",
            **compare_to_gensim(m[role]["retrieval"], ep, "plain")}
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

    # --- real text: analogies and word similarity on the kept vocabulary (a proxy, context) ---
    qs, pairs, ratings = realtext
    emb = embeddings(runs["realtext"], tp.realtext.dim)
    m["realtext"]["analogy"] = {"questions": int(len(qs)),
                                **score_all(emb, lambda E: scores.analogy_accuracy(E, qs))}
    m["realtext"]["analogy_vs_gensim"] = compare_to_gensim(m["realtext"]["analogy"], ep)
    m["realtext"]["wordsim"] = {"pairs": int(len(pairs)),
                                **score_all(emb, lambda E: scores.similarity_spearman(E, pairs, ratings))}
    m["realtext"]["median_rel_gap_top"] = float(np.median(m["realtext"]["rel_gaps_top"]))

    # --- what the claims read (flat keys) ---
    dq, ds = m["dynamics"]["quartic"], m["dynamics"]["sgns"]
    rich = m["downstream_rich"]
    m["claims"] = {
        "quartic_plateaus": dq["n_plateaus"], "sgns_plateaus": ds["n_plateaus"],
        "quartic_skipped_levels": dq["skipped_levels"], "sgns_skipped_levels": ds["skipped_levels"],
        "quartic_max_rank_jump": dq["max_rank_jump"], "sgns_max_rank_jump": ds["max_rank_jump"],
        "quartic_overlap": dq["overlap_final"], "sgns_overlap": ds["overlap_final"],
        "quartic_spearman": dq["spearman_step_times"], "sgns_spearman": ds["spearman_step_times"],
        "gensim_downstream": s["gensim"], "quartic_downstream": s["quartic"],
        "downstream_gap_over_tolerance": m["downstream"]["score"]["gap_over_tolerance"],
        "downstream_control_gap_over_tolerance": m["downstream"]["score_control"]["gap_over_tolerance"],
        "downstream_abs_gap": m["downstream"]["score"]["abs_gap_quartic_gensim"],
        "downstream_tolerance": m["downstream"]["score"]["tolerance"],
        "sgns_downstream": s["sgns"], "closed_form_downstream": s["closed_form"], "plain_downstream": s["plain"],
        "rich_gensim_downstream": rich["retrieval"]["gensim"],
        "rich_quartic_downstream": rich["retrieval"]["quartic"],
        "rich_closed_form_downstream": rich["retrieval"]["closed_form"],
        "rich_sgns_downstream": rich["retrieval"]["sgns"],
        "rich_plain_downstream": rich["retrieval"]["plain"],
        "rich_tolerance": rich["score"]["tolerance"],
        "rich_gap_over_tolerance": rich["score"]["gap_over_tolerance"],
        "rich_control_gap_over_tolerance": rich["score_control"]["gap_over_tolerance"],
        "rich_quartic_minus_gensim": rich["score"]["quartic_minus_gensim"],
        "rich_plain_minus_gensim": rich["score_control"]["quartic_minus_gensim"],
        "rich_sgns_overlap": rich["sgns"]["overlap_final"],
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
                                f"{key}_sgns_downstream": sw["sgns"],
                                f"{key}_gap_over_tolerance": sw["gap_over_tolerance"],
                                f"{key}_minus_gensim_over_tolerance": sw["minus_gensim_over_tolerance"],
                                f"{key}_quartic_minus_gensim": sw["quartic_minus_gensim"],
                                f"{key}_quartic_rel_grad": m[role]["word2vec_weights"]["final_rel_grad_quartic"]})
    return m, curves


def main() -> None:
    with stage("w2v_quartic", "evaluate", W2VParams) as ctx:
        import time

        import numpy as np

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics

        limit_threads()
        ep, tp = ctx.params.evaluate, ctx.params.train
        seeds = list(ctx.seeds)
        results, first = {}, None
        realtext, keep0 = None, None
        t0 = time.perf_counter()
        for seed in seeds:
            runs = {role: load_run(ctx.root, seed, role) for role in ROLES}
            keep = runs["realtext"]["keep"]
            if realtext is None:
                realtext, keep0 = realtext_items(ctx.root, tp, keep), keep
            elif not np.array_equal(keep, keep0):
                raise ValueError(f"seed {seed}: the real-text vocabulary kept differs from seed {seeds[0]}'s")
            m, curves = seed_metrics(runs, tp, ep, realtext)
            results[seed] = m
            if first is None:
                first = (seed, runs, curves)
            c = m["claims"]
            print(f"  seed {seed}: dynamics plateaus quartic={c['quartic_plateaus']} sgns={c['sgns_plateaus']}, "
                  f"skipped sgns={c['sgns_skipped_levels']}, Spearman sgns={c['sgns_spearman']}, overlap "
                  f"sgns={c['sgns_overlap']:.3f}; overlap_rich quartic={c['rich_quartic_downstream']:.3f} "
                  f"gensim={c['rich_gensim_downstream']:.3f} plain={c['rich_plain_downstream']:.3f} "
                  f"gap/tol={c['rich_gap_over_tolerance']:.2f} (control {c['rich_control_gap_over_tolerance']:.2f})"
                  + (f", word2vec weights quartic={c['rich_w2v_quartic_downstream']:.3f} "
                     f"sgns={c['rich_w2v_sgns_downstream']:.3f}" if "rich_w2v_quartic_downstream" in c else "")
                  + f" [{time.perf_counter() - t0:.1f}s]", flush=True)
        metrics = per_seed_metrics(results, plots_seed=first[0])
        write_json(ctx.path(METRICS), metrics)
        plots(ctx, first, metrics, tp)
        c = metrics["claims"]
        print(f"  means over seeds {seeds}: overlap_rich quartic={c['rich_quartic_downstream']:.3f} "
              f"gensim={c['rich_gensim_downstream']:.3f} plain={c['rich_plain_downstream']:.3f}; "
              f"gap/tol={c['rich_gap_over_tolerance']:.2f}; real text ({len(realtext[0])} analogies, "
              f"{len(realtext[1])} wordsim pairs) analogy quartic={c['realtext_analogy_quartic']:.3f} "
              f"gensim={c['realtext_analogy_gensim']:.3f}", flush=True)


def plots(ctx, first: tuple, metrics: dict, tp) -> None:
    """The dynamics plots and CSVs of the first verdict seed (``first``: seed, runs, curves); the
    downstream bars: means over the verdict seeds, each seed a dot."""
    import matplotlib
    import numpy as np

    from stages.common.plots import new_figure, save_png, write_csv

    seed, runs, curves = first
    m = metrics["per_seed"][str(seed)]
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
    axes[0].set_title(f"σ_k² of W (log scale; seed {seed}); dotted: predicted step times τ_k")
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
    ax.set_title(f"learning time of each eigendirection (seed {seed})"); ax.legend(fontsize=8)
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
    ax.set_ylim(0, 1.02); ax.legend(fontsize=7, ncol=2); ax.set_title(f"subspace overlap over time (seed {seed})")
    save_png(fig, ctx.path(PLOT_OVERLAP))

    # 4. downstream scores: the mean over the verdict seeds (bar), each seed's figure (dots)
    per = [metrics["per_seed"][k] for k in metrics["per_seed"]]
    panels = [("overlap_rich retrieval (checked)", ("downstream_rich", "retrieval")),
              ("overlap retrieval (sparse counts)", ("downstream", "retrieval")),
              ("dynamics-corpus retrieval", ("dynamics", "retrieval")),
              ("real-text analogies", ("realtext", "analogy")),
              ("real-text WordSim Spearman", ("realtext", "wordsim"))]
    fig, axes = new_figure(1, len(panels), figsize=(18, 3.8))
    colours = {"closed_form": "#888", "quartic": "C0", "sgns": "C1", "gensim": "C2", "plain": "C3",
               "quartic_w2v": "C4", "sgns_w2v": "C5"}
    for ax, (title, (role, key)) in zip(axes, panels):
        s = metrics[role][key]
        methods = list(METHODS) + [k for k in W2V_METHODS if k in s]
        ax.bar(range(len(methods)), [s[k] for k in methods], color=[colours[k] for k in methods], alpha=0.7)
        for i, k in enumerate(methods):
            ax.plot([i] * len(per), [q[role][key][k] for q in per], "k.", ms=4)
        ax.set_xticks(range(len(methods)), methods, rotation=30, fontsize=7)
        ax.set_title(f"{title}, {len(per)} seeds", fontsize=9)
    save_png(fig, ctx.path(PLOT_SCORES))
    nan = float("nan")
    write_csv(ctx.path(CSV_SCORES), [
        {"method": k, "downstream_retrieval": metrics["downstream"]["retrieval"].get(k, nan),
         "downstream_rich_retrieval": metrics["downstream_rich"]["retrieval"].get(k, nan),
         "dynamics_retrieval": metrics["dynamics"]["retrieval"].get(k, nan),
         "realtext_analogy": metrics["realtext"]["analogy"].get(k, nan),
         "realtext_wordsim": metrics["realtext"]["wordsim"].get(k, nan)}
        for k in METHODS + W2V_METHODS])


if __name__ == "__main__":
    main()
