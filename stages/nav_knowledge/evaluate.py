"""nav_knowledge evaluate: AUROC of P(known), ESS, held-out NLL, replanning ratios, plots, per
verdict seed.

Every figure below is computed for each verdict seed from that seed's agents alone and written
under ``per_seed`` beside the mean over the seeds (stages.common.seeds.per_seed_metrics); the
ledger judges the claims over the per-seed figures.

* ``auroc_relevant.<method>``: sklearn.metrics.roc_auc_score of P(known) against the true known
  flags over the behaviour-relevant walls of all agents pooled (|Delta log-lik| > ``relevance``
  when the wall's knowledge is flipped at the true knowledge set); ``auroc_all.<method>`` over
  every wall; ``auroc_relevant_per_agent_mean`` averages agents with both classes present. Methods:
  ``sis``, ``sis_rm``, ``gibbs`` and ``static`` (SIS-RM under the static navigator: the control).
* ``nll.<arm>``: held-out predictive NLL summed over every held-out trajectory of the seed, for
  the arms of train.NLL_ARMS (``prior``: prior draws, the trajectories taken out; ``static``: the
  static navigator's posterior); ``nll.margin_<arm>`` = min(omniscient, ignorant) - arm (> 0: the
  arm predicts better than both); ``nll.trajectories_won`` counts held-out trajectories where
  SIS-RM beats both, ``nll.trajectories_won_prior`` those where it beats the prior.
* ``ess``: plain SIS's ESS (collapse) vs resample-move's final ESS.
* ``replan``: copied from reports/nav_knowledge/replan.json (timings: not deterministic).
"""
from __future__ import annotations

import json

from stages.common.runtime.stage import fail, stage

from .params import NavKnowledgeParams
from .paths import METRICS, PLOT_AUROC, PLOT_GRID, PLOT_REPLAN, POSTERIOR, REPLAN_METRICS, TRAIN_METRICS, WORLDS
from .world import load_world

METHODS = {"sis": "plain SIS", "sis_rm": "SIS\nresample-move", "gibbs": "Gibbs\n(reference)",
           "static": "static navigator\n(control)"}
NLL_ARMS = ("sis_rm", "sis", "gibbs", "static", "prior", "omniscient", "ignorant")
REPLAN_KEYS = ("identical_all", "events_total", "speedup_64", "speedup_vs_scipy_64", "lpa_speedup_64",
               "largest_size", "speedup_vs_scipy_largest", "speedup_vs_dijkstra_largest")


def auroc(y, s) -> float:
    import numpy as np
    from sklearn.metrics import roc_auc_score

    y = np.asarray(y, dtype=bool)
    if y.all() or not y.any():
        return float("nan")
    return float(roc_auc_score(y, s))


def plot_grid(agent: dict, p_known, path) -> None:
    """The first agent's world: walls coloured by P(known) (SIS-RM), truly known walls outlined,
    the trajectories drawn (held-out ones dashed)."""
    import numpy as np

    from stages.common.plots import new_figure, save_png

    w = load_world(agent)
    fig, ax = new_figure(figsize=(6, 5.4))
    from matplotlib.patches import Rectangle

    img = np.full(w.H * w.W, np.nan)
    for k, cells in enumerate(w.wall_cells):
        img[cells] = p_known[k]
    im = ax.imshow(img.reshape(w.H, w.W), cmap="viridis", vmin=0, vmax=1)
    for k, cells in enumerate(w.wall_cells):
        if agent["known"][k]:
            for c in cells:
                r, cc = divmod(c, w.W)
                ax.add_patch(Rectangle((cc - 0.5, r - 0.5), 1, 1, fill=False, ec="red", lw=1.5))
    n_test = len(agent["paths"]) - agent["held_out"]
    for i, pth in enumerate(agent["paths"]):
        rc = np.array([divmod(c, w.W) for c in pth])
        ax.plot(rc[:, 1], rc[:, 0], "--" if i >= n_test else "-", lw=1.5)
        ax.plot(rc[0, 1], rc[0, 0], "o", color="k", ms=4)
        ax.plot(rc[-1, 1], rc[-1, 0], "*", color="k", ms=8)
    fig.colorbar(im, ax=ax, label="P(known) (SIS resample-move)")
    ax.set_title("colour: P(known); red outline: truly known\n"
                 "trajectories (dashed: held out), o start, * goal", fontsize=10)
    save_png(fig, path)


def seed_metrics(post: dict, train: dict, replan: dict, relevance: float) -> dict:
    """One seed's figures: ``post`` its arrays of posterior.npz (prefix removed), ``train`` /
    ``replan`` its per-seed figures of train.json / replan.json."""
    import numpy as np

    known = post["known"].astype(bool)
    rel = np.abs(post["delta"]) > relevance
    m: dict = {"walls": int(known.size), "relevant_walls": int(rel.sum()),
               "relevant_share": float(rel.mean()), "known_share_relevant": float(known[rel].mean())
               if rel.any() else float("nan")}
    m["auroc_relevant"] = {k: auroc(known[rel], post[f"p_{k}"][rel]) for k in METHODS}
    m["auroc_all"] = {k: auroc(known, post[f"p_{k}"]) for k in METHODS}
    per = {k: [] for k in METHODS}
    for a in np.unique(post["agent_of_wall"]):
        sel = (post["agent_of_wall"] == a) & rel
        for k in METHODS:
            v = auroc(known[sel], post[f"p_{k}"][sel])
            if np.isfinite(v):
                per[k].append(v)
    m["auroc_relevant_per_agent_mean"] = {k: float(np.mean(v)) if v else float("nan") for k, v in per.items()}
    m["auroc_relevant_agents_scored"] = len(per["sis_rm"])
    nll = {k: float(post[f"nll_{k}"].sum()) for k in NLL_ARMS}
    base = min(nll["omniscient"], nll["ignorant"])
    for k in ("sis_rm", "gibbs", "static", "prior"):
        nll[f"margin_{k}"] = base - nll[k]
    nll["gain_over_prior_sis_rm"] = nll["prior"] - nll["sis_rm"]
    nll["gain_over_prior_static"] = nll["prior"] - nll["static"]
    best_base = np.minimum(post["nll_omniscient"], post["nll_ignorant"])
    nll["trajectories"] = int(best_base.size)
    nll["trajectories_won"] = int((post["nll_sis_rm"] < best_base - 1e-9).sum())
    nll["trajectories_won_prior"] = int((post["nll_sis_rm"] < post["nll_prior"] - 1e-9).sum())
    m["nll"] = nll
    m["ess"] = {"particles": train["particles"], "sis_median": train["ess_sis_median"],
                "sis_max": train["ess_sis_max"], "sis_rm_final_median": train["ess_rm_final_median"],
                "sis_rm_resamples_mean": train["resamples_mean"], "sis_rm_accept_mean": train["accept_mean"],
                "static_resamples_mean": train["resamples_static_mean"]}
    m["replan"] = {k: replan[k] for k in REPLAN_KEYS}
    m["replan"]["identical_all"] = 1.0 if replan["identical_all"] else 0.0
    return m


def split_seeds(arrays: dict) -> dict[int, dict]:
    """posterior.npz's ``s<seed>/<name>`` arrays as {seed: {name: array}}."""
    out: dict[int, dict] = {}
    for key, v in arrays.items():
        seed, name = key.split("/", 1)
        out.setdefault(int(seed[1:]), {})[name] = v
    return out


def main() -> None:
    with stage("nav_knowledge", "evaluate", NavKnowledgeParams) as ctx:
        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png
        from stages.common.seeds import per_seed_metrics

        posts = split_seeds(dict(np.load(ctx.path(POSTERIOR))))
        train = json.loads(ctx.path(TRAIN_METRICS).read_text())["per_seed"]
        replan = json.loads(ctx.path(REPLAN_METRICS).read_text())
        worlds = json.loads(ctx.path(WORLDS).read_text())
        for name, have in (("posterior.npz", {str(s) for s in posts}), ("train.json", set(train)),
                           ("replan.json", set(replan["per_seed"])), ("worlds.json", set(worlds["seeds"]))):
            missing = [s for s in ctx.seeds if str(s) not in have]
            if missing:
                fail(f"{name} has no figures for verdict seeds {missing}; run `dvc repro stages/nav_knowledge/dvc.yaml`")
        ep = ctx.params.evaluate
        results = {s: seed_metrics(posts[s], train[str(s)], replan["per_seed"][str(s)], ep.relevance)
                   for s in ctx.seeds}
        for s, m in results.items():
            print(f"  seed {s}: AUROC relevant {m['auroc_relevant']}, all {m['auroc_all']}; relevant share "
                  f"{m['relevant_share']:.2f}; NLL {m['nll']}; ESS {m['ess']}; replan {m['replan']}", flush=True)
        write_json(ctx.path(METRICS), per_seed_metrics(results))

        # plots: the first seed's first agent; bars are the mean over the seeds, dots each seed
        seeds = list(ctx.seeds)
        first = dict(worlds["seeds"][str(seeds[0])][0], held_out=worlds["params"]["held_out"])
        p0 = posts[seeds[0]]
        nw0 = int((p0["agent_of_wall"] == 0).sum())
        plot_grid(first, p0["p_sis_rm"][:nw0], ctx.path(PLOT_GRID))
        fig, (a1, a2) = new_figure(1, 2, figsize=(11, 4))
        xs = np.arange(len(METHODS))
        for off, key, lab in ((-0.2, "auroc_relevant", "behaviour-relevant walls"), (0.2, "auroc_all", "all walls")):
            vals = np.array([[results[s][key][k] for k in METHODS] for s in seeds])
            a1.bar(xs + off, np.nanmean(vals, axis=0), 0.4, label=lab)
            for row in vals:
                a1.plot(xs + off, row, "k.", ms=4)
        a1.axhline(0.8, color="k", ls=":", lw=1)
        a1.set_xticks(xs, list(METHODS.values()), fontsize=8)
        a1.set_ylabel(f"AUROC of P(known) (bars: mean of {len(seeds)} seeds; dots: each seed)")
        a1.set_ylim(0, 1.05)
        a1.legend(loc="lower right")
        ess = np.array([[results[s]["ess"]["sis_median"], results[s]["ess"]["sis_rm_final_median"]] for s in seeds])
        a2.bar([0, 1], ess.mean(axis=0))
        for row in ess:
            a2.plot([0, 1], row, "k.", ms=4)
        a2.axhline(results[seeds[0]]["ess"]["particles"], color="k", ls=":", lw=1, label="particles")
        a2.set_xticks([0, 1], ["plain SIS", "SIS resample-move"])
        a2.set_ylabel("ESS of the final weights (median over agents)")
        a2.legend()
        save_png(fig, ctx.path(PLOT_AUROC))
        fig, ax = new_figure(figsize=(6, 4.2))
        curves = {}
        for key in ("incremental_ms", "lpa_ms", "dijkstra_ms", "scipy_ms", "scipy_with_graph_ms"):
            pts = {}
            for s in seeds:
                for r in replan["per_seed"][str(s)]["sizes"]:
                    if r["events"]:
                        pts.setdefault(r["size"], []).append(r[key])
            curves[key] = sorted((sz, float(np.mean(v))) for sz, v in pts.items())
        from stages.common.fits import loglog_slope

        for key, lab in (("incremental_ms", "incremental repair (ours, Python)"),
                         ("lpa_ms", "LPA* alone (ours, Python)"),
                         ("dijkstra_ms", "Dijkstra from scratch (ours, Python)"),
                         ("scipy_ms", "scipy.sparse.csgraph.dijkstra (C)"),
                         ("scipy_with_graph_ms", "scipy incl. building its graph")):
            sz = [c[0] for c in curves[key]]
            ys = [c[1] for c in curves[key]]
            slope = loglog_slope(sz, ys)[0] if len(sz) >= 2 else None
            ax.loglog(sz, ys, "o-", label=lab + (f" (log-log slope {slope:.2f})" if slope is not None else ""))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("grid side")
        ax.set_ylabel(f"ms per replanning event (mean of {len(seeds)} seeds)")
        ax.set_title("replanning after newly seen walls")
        ax.legend(fontsize=8)
        save_png(fig, ctx.path(PLOT_REPLAN))


if __name__ == "__main__":
    main()
