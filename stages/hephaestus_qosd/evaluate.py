"""hephaestus_qosd evaluate: every method on every verdict seed's test graphs and cost kinds,
checked by Dijkstra, against the exact optimum (HiGHS) and the classical baseline.

Methods (each seed's Morph from train; ``B`` = Refine's evaluation budget, iterations x batch
repaired samples):
- ``greedy``: the PATHPERTURB-style greedy (the baseline of the contract v1 claims, untrimmed);
- ``greedy_trim``: the greedy, then Forge's trim;
- ``greedy_search``: the classical baseline of the cost musts: the trimmed greedy improved by a
  local search of B candidates (random drop/rescale around the incumbent), each repaired by the
  greedy and trimmed: the same trim and the same evaluation budget as Hephaestus, no Forge;
- ``forge``: Forge alone (path stressing + trim);
- ``forge_search``: the musts' control: Forge improved by the same local search of B candidates,
  each repaired by Forge's path stressing + trim: Hephaestus with Morph and Refine taken out, at
  its evaluation budget;
- ``morph_one``: the first Morph sample, repaired (an ablation);
- ``morph``: Forge + B Morph samples from the prior, no policy update (the Refine ablation);
- ``blind``: Refine on the untrained mixture (the seed's CVAE at initialisation): the generative
  search with nothing learned;
- ``hephaestus``: Forge -> Morph -> Refine;
- ``optimum``: HiGHS (convex QP / MILP / LP) on graphs of at most ``milp_max_nodes`` nodes.

Every method's perturbation must pass the Dijkstra check: the stage stops if one does not
(feasibility holds by construction: every method ends with a repair; tests/hephaestus_qosd test it).

Outputs: reports/hephaestus_qosd/metrics.json (per seed under ``per_seed``, and their mean: what
claims.yaml checks), results.csv (one row per seed, instance and method), cost_vs_optimum.png and
its data cost_vs_optimum.csv (means over the seeds).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .params import PARAMS
from .paths import INSTANCES, METRICS, PLOT, PLOT_DATA, RESULTS, model_dir

METHODS = ("greedy", "greedy_trim", "greedy_search", "forge", "forge_search", "morph_one", "morph", "blind",
           "hephaestus")
NONLINEAR = ("quadratic", "fixed_charge")
BASELINES = ("greedy", "greedy_trim", "greedy_search", "forge_search")   # each arm's paired ratio to these


def solve_all(inst, model, blind, ep, fp, seed: int, graph: int) -> dict:
    """Each method's perturbation on ``inst`` (dict of arrays), and the first-batch figures:
    ``_first_batch`` the best cost Hephaestus saw after its first batch (Forge's included) and
    ``_search_first_batch`` forge_search's best after as many candidates. Every random draw comes
    from (seed, stream, graph, cost kind), so a seed's figures depend on that seed alone."""
    from stages.common.seeds import rng

    from .cvae import edge_features, refine
    from .qosd import COSTS, forge, greedy_pathperturb, greedy_repair, local_search, trim

    k = COSTS.index(inst.kind)
    budget = ep.refine.iterations * ep.refine.batch
    g = greedy_pathperturb(inst)
    gt = trim(inst, g)
    gs = local_search(inst, gt, budget, rng(seed, 3, graph, k), fix=greedy_repair)
    fd = forge(inst, fp.step_frac, fp.credit)
    trace: list = []
    fs = local_search(inst, fd, budget, rng(seed, 4, graph, k), fp.step_frac, fp.credit, trace=trace)
    feats = edge_features(inst, fd)
    draws = [seed, 5, graph, k]                   # the three Refine runs draw the same latents
    full = refine(inst, model, feats, fd, ep.refine, fp, draws)
    prior = refine(inst, model, feats, fd, ep.refine, fp, draws, use_policy=False)
    untrained = refine(inst, blind, feats, fd, ep.refine, fp, draws)
    return {"greedy": g, "greedy_trim": gt, "greedy_search": gs, "forge": fd, "forge_search": fs,
            "morph_one": full["first_sample"], "morph": prior["delta"], "blind": untrained["delta"],
            "hephaestus": full["delta"], "_first_batch": full["curve"][0],
            "_search_first_batch": trace[ep.refine.batch - 1]}


def summarise(rows: list[dict], costs: list[str]) -> dict:
    """One seed's figures from its per-instance rows: per cost kind and method the mean paired
    ratio of its cost to each baseline's (:data:`BASELINES`), the share of instances not worse
    than greedy_search, the gap to the optimum; the same pooled over the non-linear kinds."""
    import numpy as np

    by: dict = {}
    for r in rows:
        by.setdefault((r["cost"], r["method"]), []).append(r)
    out = {"instances": len({r["instance"] for r in rows if r["method"] == "hephaestus"})}
    out["feasible_fraction"] = {m: float(np.mean([r["feasible"] for r in rows if r["method"] == m]))
                                for m in (*METHODS, "optimum") if any(r["method"] == m for r in rows)}
    pooled: dict = {}
    for kind in costs:
        cost = {(r["method"], r["instance"]): r["cost_value"] for r in rows if r["cost"] == kind}
        opt = {r["instance"]: r["cost_value"] for r in by.get((kind, "optimum"), []) if r["optimal"]}
        names = [r["instance"] for r in by[(kind, "hephaestus")]]
        k = out[kind] = {"milp_solved": len(opt), "instances": len(names)}
        for m in (*METHODS, "optimum"):
            if (kind, m) not in by:
                continue
            mine = {r["instance"]: r["cost_value"] for r in by[(kind, m)]}
            stats = {}
            for b in BASELINES:
                ratio = [mine[i] / cost[(b, i)] for i in names if i in mine]
                stats[f"ratio_vs_{b}_mean"] = float(np.mean(ratio))
                if kind in NONLINEAR:
                    pooled.setdefault((m, b), []).extend(ratio)
            stats["not_worse_than_greedy_search"] = float(np.mean(
                [mine[i] <= cost[("greedy_search", i)] * (1 + 1e-9) for i in names if i in mine]))
            gaps = [mine[i] / opt[i] - 1 for i in names if i in mine and i in opt and opt[i] > 0]
            if gaps:
                stats["gap_to_optimum_mean"] = float(np.mean(gaps))
                stats["gap_to_optimum_max"] = float(np.max(gaps))
                if kind in NONLINEAR:
                    pooled.setdefault((m, "gap"), []).extend(gaps)
            k[m] = stats
        first = [r for r in rows if r["cost"] == kind and r["method"] == "hephaestus"]
        k["first_batch"] = {"hephaestus_over_forge_search_mean": float(np.mean(
            [r["first_batch"] / r["search_first_batch"] for r in first]))}
    out["nonlinear"] = {}
    for (m, b), v in sorted(pooled.items()):
        key = "gap_to_optimum_mean" if b == "gap" else f"ratio_vs_{b}_mean"
        out["nonlinear"].setdefault(m, {})[key] = float(np.mean(v))
    heph_gap = out["nonlinear"].get("hephaestus", {}).get("gap_to_optimum_mean")
    out["hephaestus_gap_to_optimum_nonlinear_mean"] = heph_gap
    return out


def evaluate_seed(graphs: list, costs: list[str], model, blind, ep, fp, seed: int, progress=None) -> tuple[list, dict]:
    """One verdict seed: (rows, CPU seconds by part). Each row: seed, instance, family, cost kind,
    sizes, method, cost, feasible (Dijkstra), optimal. Raises a RuntimeError naming the method
    and instance if a perturbation fails the Dijkstra check."""
    import time

    from .milp import solve_exact
    from .qosd import is_feasible

    rows, cpu = [], {"methods": 0.0, "milp": 0.0}
    for gi, g in enumerate(graphs):
        for kind in costs:
            inst = g.with_kind(kind)
            t0 = time.process_time()
            sol = solve_all(inst, model, blind, ep, fp, seed, gi)
            cpu["methods"] += time.process_time() - t0
            base = {"seed": seed, "instance": inst.name, "family": inst.family, "cost": kind, "nodes": inst.n,
                    "edges": inst.m}
            for m in METHODS:
                ok = is_feasible(inst, sol[m])
                if not ok:
                    raise RuntimeError(f"seed {seed}: {m}'s perturbation of {inst.name} fails the Dijkstra check")
                row = {**base, "method": m, "cost_value": inst.cost(sol[m]), "feasible": ok, "optimal": False}
                if m == "hephaestus":
                    row.update(first_batch=sol["_first_batch"], search_first_batch=sol["_search_first_batch"])
                rows.append(row)
            if inst.n <= ep.milp_max_nodes:
                t0 = time.process_time()
                ex = solve_exact(inst, ep.milp_time_limit)
                cpu["milp"] += time.process_time() - t0
                if ex["delta"] is not None:
                    rows.append({**base, "method": "optimum", "cost_value": ex["cost"],
                                 "feasible": is_feasible(inst, ex["delta"]), "optimal": ex["optimal"]})
        if progress:
            progress()
    return rows, cpu


def main() -> None:
    with stage("hephaestus_qosd", "evaluate", PARAMS) as ctx:
        import json

        import numpy as np
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_json
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics, run_seeds

        limit_threads()        # one torch/BLAS thread: tiny MLPs and Dijkstras gain nothing from two

        from .cvae import load_model_dir, untrained_like
        from .qosd import Instance

        data = json.loads(ctx.path(INSTANCES).read_text())
        costs, ep, fp = data["costs"], ctx.params.evaluate, ctx.params.forge
        missing = [s for s in ctx.seeds if str(s) not in data.get("seeds", {}) or not ctx.path(model_dir(s)).is_dir()]
        if missing:
            fail(f"no graphs or Morph model for verdict seeds {missing}; run "
                 f"`dvc repro stages/hephaestus_qosd/dvc.yaml:hephaestus_qosd-train`")
        graphs = {s: [Instance.from_dict(d) for d in data["seeds"][str(s)]["test"]] for s in ctx.seeds}
        bar = tqdm(total=sum(map(len, graphs.values())), desc=f"hephaestus_qosd: test graphs, seeds {ctx.seeds}",
                   mininterval=2)

        def one(seed: int):
            folder = ctx.path(model_dir(seed))
            try:
                return evaluate_seed(graphs[seed], costs, load_model_dir(folder), untrained_like(folder, seed), ep, fp,
                                     seed, progress=bar.update)
            except RuntimeError as exc:
                fail(str(exc), code=1)

        out = run_seeds(ctx.seeds, one, what="seed")
        bar.close()
        rows = [r for s in ctx.seeds for r in out[s][0]]
        cpu = {k: sum(c[k] for _, c in out.values()) for k in ("methods", "milp")}
        ctx.run.log_metrics({f"cpu_s.{k}": v for k, v in cpu.items()})   # timings: MLflow only, not metrics.json
        figures = {s: summarise(out[s][0], costs) for s in ctx.seeds}
        metrics = per_seed_metrics(figures)
        write_json(ctx.path(METRICS), metrics)
        write_csv(ctx.path(RESULTS), [{k: r.get(k, "") for k in (*rows[0], "first_batch", "search_first_batch")}
                                      for r in rows])
        table = [{"cost": kind, "method": m, "cost_over_optimum": 1.0 + metrics[kind][m]["gap_to_optimum_mean"]}
                 for kind in costs for m in (*METHODS, "optimum")
                 if "gap_to_optimum_mean" in metrics.get(kind, {}).get(m, {})]
        write_csv(ctx.path(PLOT_DATA), table or [{"cost": k, "method": m, "cost_over_optimum": float("nan")}
                                                 for k in costs for m in METHODS])
        fig, ax = new_figure(figsize=(8, 3.8))
        meths = [m for m in (*METHODS, "optimum") if any(t["method"] == m for t in table)]
        width = 0.8 / max(len(meths), 1)
        for i, m in enumerate(meths):
            ys = [next((t["cost_over_optimum"] for t in table if t["cost"] == k and t["method"] == m), np.nan) for k in costs]
            ax.bar(np.arange(len(costs)) + i * width, ys, width, label=m)
        ax.axhline(1.1, color="grey", ls=":", lw=1, label="optimum + 10%")
        ax.set_xticks(np.arange(len(costs)) + 0.4 - width / 2, costs)
        ax.set(ylabel="mean cost / optimum (HiGHS)",
               title=f"hephaestus_qosd: mean over seeds {ctx.seeds}, {len(graphs[ctx.seeds[0]])} test graphs each")
        ax.legend(fontsize=7, ncol=3)
        save_png(fig, ctx.path(PLOT))
        print(f"  CPU s over {len(ctx.seeds)} seeds: methods {cpu['methods']:.1f}, HiGHS {cpu['milp']:.1f}", flush=True)
        for s in ctx.seeds:
            for kind in costs:
                f = figures[s][kind]
                print(f"  seed {s} {kind:13s} / greedy_search: hephaestus {f['hephaestus']['ratio_vs_greedy_search_mean']:.3f} "
                      f"forge_search {f['forge_search']['ratio_vs_greedy_search_mean']:.3f}; hephaestus / forge_search "
                      f"{f['hephaestus']['ratio_vs_forge_search_mean']:.3f}; gap to opt hephaestus "
                      f"{f['hephaestus'].get('gap_to_optimum_mean', float('nan')):.3f} forge_search "
                      f"{f['forge_search'].get('gap_to_optimum_mean', float('nan')):.3f}", flush=True)


if __name__ == "__main__":
    main()
