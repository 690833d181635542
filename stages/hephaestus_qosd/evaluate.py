"""hephaestus_qosd evaluate: every method on every test graph and cost kind, checked by Dijkstra,
against the exact optimum (HiGHS) and the greedy PATHPERTURB-style baseline.

Methods: ``greedy`` (PATHPERTURB-style), ``forge`` (path stressing + trim alone), ``morph_one``
(one Morph sample, repaired: an ablation), ``morph`` (Forge + as many Morph samples as the full
method draws, no policy update: the Refine ablation), ``hephaestus`` (Forge -> Morph -> Refine),
``optimum`` (HiGHS LP / convex QP / MILP, on graphs of at most ``milp_max_nodes`` nodes).

Outputs: reports/hephaestus_qosd/metrics.json (what claims.yaml checks), results.csv (one row per
instance and method), cost_vs_optimum.png and its data cost_vs_optimum.csv.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import INSTANCES, METRICS, MODEL, PLOT, PLOT_DATA, RESULTS

METHODS = ("greedy", "forge", "morph_one", "morph", "hephaestus")


def solve_all(inst, model, ep, fp, seed: int) -> dict:
    """Each method's perturbation on ``inst``, and the exact solution if asked (dict of arrays)."""
    from .cvae import edge_features, refine
    from .qosd import forge, greedy_pathperturb

    fd = forge(inst, fp.step_frac, fp.credit)
    feats = edge_features(inst, fd)
    full = refine(inst, model, feats, fd, ep.refine, fp, seed)
    prior = refine(inst, model, feats, fd, ep.refine, fp, seed, use_policy=False)
    return {"greedy": greedy_pathperturb(inst), "forge": fd, "morph_one": None, "morph": prior["delta"],
            "hephaestus": full["delta"], "_morph_one_cost": full["first_sample_cost"], "_curve": full["curve"]}


def summarise(rows: list[dict], costs: list[str], level: float = 0.95) -> dict:
    """The claims' figures from the per-instance rows."""
    import numpy as np

    from stages.common.stats import t_interval

    out = {"instances": len({r["instance"] for r in rows})}
    by = {}
    for r in rows:
        by.setdefault((r["cost"], r["method"]), []).append(r)
    feas = [r["feasible"] for r in rows if r["method"] == "hephaestus"]
    out["feasible_fraction"] = {m: float(np.mean([r["feasible"] for r in rows if r["method"] == m]))
                                for m in (*METHODS, "optimum") if any(r["method"] == m for r in rows)}
    out["hephaestus_feasible_fraction"] = float(np.mean(feas))
    gaps_nonlinear = []
    for kind in costs:
        greedy = {r["instance"]: r["cost_value"] for r in by[(kind, "greedy")]}
        opt = {r["instance"]: r["cost_value"] for r in by.get((kind, "optimum"), []) if r["optimal"]}
        k = out[kind] = {"milp_solved": len(opt), "instances": len(greedy)}
        for m in (*METHODS, "optimum"):
            if (kind, m) not in by:
                continue
            rs = by[(kind, m)]
            ratio = [r["cost_value"] / greedy[r["instance"]] for r in rs if greedy[r["instance"]] > 0]
            stats = {"ratio_vs_greedy_mean": float(np.mean(ratio)),
                     "not_worse_than_greedy": float(np.mean([r["cost_value"] <= greedy[r["instance"]] * (1 + 1e-9) for r in rs]))}
            if len(ratio) >= 2:
                stats["ratio_vs_greedy_ci_high"] = t_interval(ratio, level)["high"]
            gaps = [r["cost_value"] / opt[r["instance"]] - 1 for r in rs if r["instance"] in opt and opt[r["instance"]] > 0]
            if gaps:
                stats["gap_to_optimum_mean"] = float(np.mean(gaps))
                stats["gap_to_optimum_max"] = float(np.max(gaps))
                if m == "hephaestus" and kind in ("quadratic", "fixed_charge"):
                    gaps_nonlinear += gaps
            k[m] = stats
    out["hephaestus_gap_to_optimum_nonlinear_mean"] = float(np.mean(gaps_nonlinear)) if gaps_nonlinear else None
    return out


def main() -> None:
    with stage("hephaestus_qosd", "evaluate", PARAMS) as ctx:
        import json
        import time

        import numpy as np
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv

        limit_threads()        # one torch/BLAS thread: tiny MLPs and Dijkstras gain nothing from two

        from .cvae import load_model_dir
        from .milp import solve_exact
        from .qosd import Instance, is_feasible

        data = json.loads(ctx.path(INSTANCES).read_text())
        graphs = [Instance.from_dict(d) for d in data["test"]]
        costs, ep, fp = data["costs"], ctx.params.evaluate, ctx.params.forge
        model = load_model_dir(ctx.path(MODEL))
        rows, curves, cpu = [], [], {"methods": 0.0, "milp": 0.0}
        for gi, g in enumerate(tqdm(graphs, desc="hephaestus_qosd: test graphs", mininterval=2)):
            for kind in costs:
                inst = g.with_kind(kind)
                t0 = time.process_time()
                sol = solve_all(inst, model, ep, fp, ctx.seed * 100_003 + gi)
                cpu["methods"] += time.process_time() - t0
                curves.append(sol["_curve"])
                base = {"instance": inst.name, "family": inst.family, "cost": kind, "nodes": inst.n, "edges": inst.m}
                for m in METHODS:
                    if m == "morph_one":
                        rows.append({**base, "method": m, "cost_value": sol["_morph_one_cost"], "feasible": True, "optimal": False})
                        continue
                    d = sol[m]
                    rows.append({**base, "method": m, "cost_value": inst.cost(d), "feasible": is_feasible(inst, d), "optimal": False})
                if inst.n <= ep.milp_max_nodes:
                    t0 = time.process_time()
                    ex = solve_exact(inst, ep.milp_time_limit)
                    cpu["milp"] += time.process_time() - t0
                    if ex["delta"] is not None:
                        rows.append({**base, "method": "optimum", "cost_value": ex["cost"],
                                     "feasible": is_feasible(inst, ex["delta"]), "optimal": ex["optimal"]})
        metrics = summarise(rows, costs)
        ctx.run.log_metrics({f"cpu_s.{k}": v for k, v in cpu.items()})   # timings: MLflow only, not metrics.json
        curve = np.mean(np.array(curves) / np.array(curves)[:, :1], axis=0)
        ctx.run.log_curve("refine.batch_best_over_first", curve.tolist())
        write_json(ctx.path(METRICS), metrics)
        write_csv(ctx.path(RESULTS), rows)
        table = []
        for kind in costs:
            for m in (*METHODS, "optimum"):
                s = metrics[kind].get(m)
                if s and "gap_to_optimum_mean" in s:
                    table.append({"cost": kind, "method": m, "cost_over_optimum": 1.0 + s["gap_to_optimum_mean"]})
        if table:
            write_csv(ctx.path(PLOT_DATA), table)
        else:
            write_csv(ctx.path(PLOT_DATA), [{"cost": k, "method": m, "cost_over_optimum": float("nan")} for k in costs for m in METHODS])
        fig, ax = new_figure(figsize=(7, 3.8))
        meths = [m for m in (*METHODS, "optimum") if any(t["method"] == m for t in table)]
        width = 0.8 / max(len(meths), 1)
        for i, m in enumerate(meths):
            ys = [next((t["cost_over_optimum"] for t in table if t["cost"] == k and t["method"] == m), np.nan) for k in costs]
            ax.bar(np.arange(len(costs)) + i * width, ys, width, label=m)
        ax.axhline(1.1, color="grey", ls=":", lw=1, label="optimum + 10%")
        ax.set_xticks(np.arange(len(costs)) + 0.4 - width / 2, costs)
        ax.set(ylabel="mean cost / optimum (HiGHS)", title=f"hephaestus_qosd: {len(graphs)} test graphs per cost kind")
        ax.legend(fontsize=7, ncol=2)
        save_png(fig, ctx.path(PLOT))
        print(f"  CPU s: methods {cpu['methods']:.1f}, HiGHS {cpu['milp']:.1f}", flush=True)
        for kind in costs:
            s = metrics[kind]
            print(f"  {kind:13s} ratio vs greedy: hephaestus {s['hephaestus']['ratio_vs_greedy_mean']:.3f} forge "
                  f"{s['forge']['ratio_vs_greedy_mean']:.3f} morph_one {s['morph_one']['ratio_vs_greedy_mean']:.3f}; gap to opt "
                  f"{s['hephaestus'].get('gap_to_optimum_mean', float('nan')):.3f}", flush=True)


if __name__ == "__main__":
    main()
