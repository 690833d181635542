"""linear_cmdp evaluate: violations per episode, regret vs K and its log-log slope, plots, for
every verdict seed.

* Regret of a run after k episodes: sum_{j<=k} max(V* - V_r(pi_j), 0), V* the exact constrained
  optimum (HiGHS LP); the positive part is the official ``sample_and_compute_regret``'s (it only
  matters for policies that violate, whose V_r may exceed V*).
* An episode violates when the exact V_u(pi_k) < b - ``violation_tol`` (1e-9 by default).
* Slope: least-squares slope of log(mean regret over a setup's instances of the seed) on log k,
  over 200 log-spaced episodes in [fit_from * K, K]; the within-seed interval resamples the seed's
  instances (bootstrap) and refits. ``slope_over_logK`` is the same fit of regret / log k (one
  log factor of O~ removed).
* ``main`` / ``no_pessimism`` / ``primal_dual`` repeat the metrics of the agents named by
  evaluate.main_agent, evaluate.no_pessimism_agent (the zero-violation must's control: OPSE with
  C_u = 0) and evaluate.primal_dual_agent, so claims.yaml does not depend on agent names.

A verdict seed is one repetition of the whole experiment (its own instances and runs): its
figures are those above over its own instances. metrics.json: ``per_seed`` (every seed's
figures) beside the mean over the seeds of every figure that is not a within-seed one
(stages.common.seeds.per_seed_metrics), and ``totals`` (violating episodes and runs summed over
the seeds). The plots and CSVs pool the seeds' runs.

Writes reports/linear_cmdp/metrics.json, regret_vs_K.png, violations.png and their CSVs.
"""
from __future__ import annotations

from stages.common.fits import loglog_slope, loglog_slopes
from stages.common.runtime.stage import fail, stage

from .params import LinearCmdpParams
from .paths import CSV_REGRET, CSV_VIOLATIONS, INSTANCES, METRICS, PLOT_REGRET, PLOT_VIOLATIONS, PREPARE_METRICS, RESULTS

RNG_BOOT = 31
FIT_POINTS = 200
CHECKPOINTS = (100, 1000, 2000, 5000, 10_000, 100_000)   # regret reported at these K (to compare horizons)
# figures that mean something within one seed only: kept in per_seed, not averaged over seeds
WITHIN_SEED = ("ci_low", "ci_high", "per_instance", "boot_valid", "intercept", "first_violation_episode",
               "regret_per_episode", "violates")
ROLES = (("main", "main_agent"), ("no_pessimism", "no_pessimism_agent"), ("primal_dual", "primal_dual_agent"))


def fit_points(K: int, fit_from: float, n: int = FIT_POINTS):
    """Log-spaced episode numbers (1-based, unique) in [fit_from * K, K]."""
    import numpy as np

    lo = max(1, int(np.ceil(fit_from * K)))
    return np.unique(np.round(np.geomspace(lo, K, n)).astype(int))


def slope_with_ci(k, curves, n_boot: int, level: float, rng) -> dict:
    """Slope of log(mean over runs) on log k and its bootstrap interval over runs.

    ``curves``: (runs, len(k)) regret at the episodes ``k``."""
    import numpy as np

    curves = np.asarray(curves, dtype=float)
    slope, icpt = loglog_slope(k, curves.mean(axis=0))
    n = curves.shape[0]
    boots = curves[rng.integers(0, n, size=(n_boot, n))].mean(axis=1)          # (n_boot, len(k))
    ok = (boots > 0).all(axis=1)
    a = (1 - level) / 2
    lo, hi = (np.quantile(loglog_slopes(k, boots[ok]), [a, 1 - a]).tolist() if ok.any() else [float("nan")] * 2)
    per_run = [loglog_slope(k, c)[0] for c in curves]
    return {"slope": slope, "intercept": icpt, "ci_low": lo, "ci_high": hi, "per_instance": per_run,
            "boot_valid": int(ok.sum())}


def agent_metrics(res, name: str, insts: list[dict], ep, rng) -> dict:
    """Violations, regret and slopes of one agent, overall and per setup."""
    import numpy as np

    V_r, V_u, safe = res[f"{name}/V_r"], res[f"{name}/V_u"], res[f"{name}/safe"]
    idx = res[f"{name}/instance"]
    runs, K = V_r.shape
    v_star = np.array([insts[i]["v_star"] for i in idx])[:, None]
    thr = np.array([insts[i]["threshold"] for i in idx])[:, None]
    regret = np.cumsum(np.maximum(v_star - V_r, 0.0), axis=1)
    shortfall = thr - V_u
    viol = shortfall > ep.violation_tol
    k_fit = fit_points(K, ep.fit_from)
    setups = {}
    for s in sorted({insts[i]["setup"] for i in idx}):
        sel = np.array([insts[i]["setup"] == s for i in idx])
        fit = slope_with_ci(k_fit, regret[sel][:, k_fit - 1], ep.n_boot, ep.ci_level, rng)
        fit["slope_over_logK"] = loglog_slope(k_fit, regret[sel][:, k_fit - 1].mean(axis=0) / np.log(k_fit))[0]
        fit.update({"instances": int(sel.sum()), "regret_at_K": float(regret[sel, -1].mean()),
                    "regret_at": {str(c): float(regret[sel, c - 1].mean()) for c in CHECKPOINTS if c <= K},
                    "regret_at_K_per_instance": regret[sel, -1].tolist(),
                    "regret_over_sqrtK": float(regret[sel, -1].mean() / np.sqrt(K)),
                    "violating_episodes": int(viol[sel].sum()),
                    "safe_deployments_mean": float(safe[sel].sum(axis=1).mean()),
                    "final_gap_mean": float((v_star[sel] - V_r[sel][:, -max(1, K // 100):]).mean())})
        setups[s] = fit
    return {"episodes": int(K), "runs": int(runs), "violating_episodes": int(viol.sum()),
            "violating_episodes_per_instance": viol.sum(axis=1).tolist(),
            "instances_violating": int((viol.sum(axis=1) > 0).sum()),
            "max_violation": float(max(shortfall.max(), 0.0)),
            "min_utility_margin": float(-shortfall.max()),
            "first_violation_episode": (int(np.argmax(viol.any(axis=0))) + 1) if viol.any() else None,
            "safe_deployments": int(safe.sum()), "setups": setups}


def uniform_metrics(insts: list[dict], K: int, tol: float) -> dict:
    import numpy as np

    gap = np.array([i["v_star"] - i["uniform_values"][0] for i in insts])
    short = np.array([i["threshold"] - i["uniform_values"][1] for i in insts])
    return {"regret_per_episode": gap.tolist(), "violates": (short > tol).tolist(),
            "instances_violating": int((short > tol).sum()), "regret_at_K_mean": float(gap.mean() * K)}


def of_seed(res: dict, seed: int) -> dict:
    """One seed's arrays of results.npz, keyed ``<agent>/<field>`` (train.result_key without the seed)."""
    pre = f"s{seed}/"
    return {k[len(pre):]: v for k, v in res.items() if k.startswith(pre)}


def seed_figures(res: dict, insts: list[dict], seed: int, agents: list[str], ep, prep: dict) -> dict:
    """One verdict seed's figures: ``res`` that seed's arrays (:func:`of_seed`), ``insts`` its
    instances in index order, ``prep`` its section of prepare.json's per_seed."""
    import numpy as np

    rng = np.random.default_rng([seed, RNG_BOOT])
    m = {"agents": {a: agent_metrics(res, a, insts, ep, rng) for a in agents}}
    for role, key in ROLES:
        m[role] = m["agents"][getattr(ep, key)]
    K_main = m["main"]["episodes"]
    m["uniform"] = uniform_metrics(insts, K_main, ep.violation_tol)
    m["optimum"] = prep["optimum"]
    m["instances"] = {"kept": prep["instances"], "rejected_non_binding": prep["rejected_non_binding"],
                      **{f"{s}_rejected": v["rejected_non_binding"] for s, v in prep["setups"].items()}}
    m["fit"] = {"K": K_main, "from_episode": int(fit_points(K_main, ep.fit_from)[0]), "points": FIT_POINTS}
    return m


def within_seed(key: str) -> bool:
    return key in WITHIN_SEED or key.endswith("_per_instance")


def drop_within_seed(tree):
    """The aggregate over seeds without the figures that mean something within one seed only."""
    if isinstance(tree, dict):
        return {k: drop_within_seed(v) for k, v in tree.items() if not within_seed(k)}
    return tree


def totals(per_seed: dict[int, dict]) -> dict:
    """Violating episodes, runs and safe deployments of every agent and role, summed over the seeds."""
    first = next(iter(per_seed.values()))
    out = {}
    for name in [*first["agents"], *(r for r, _ in ROLES)]:
        rows = [m["agents"][name] if name in m["agents"] else m[name] for m in per_seed.values()]
        out[name] = {"violating_episodes": int(sum(r["violating_episodes"] for r in rows)),
                     "runs": int(sum(r["runs"] for r in rows)), "episodes": rows[0]["episodes"],
                     "instances_violating": int(sum(r["instances_violating"] for r in rows)),
                     "seeds_violating": int(sum(r["violating_episodes"] > 0 for r in rows)),
                     "max_violation": max(r["max_violation"] for r in rows),
                     "min_utility_margin": min(r["min_utility_margin"] for r in rows),
                     "safe_deployments": int(sum(r["safe_deployments"] for r in rows))}
    return out


def seed_metrics(per_seed: dict[int, dict]) -> dict:
    """metrics.json: ``per_seed`` beside the mean over the seeds of every figure that is not a
    within-seed one, and the ``totals`` over the seeds."""
    from stages.common.seeds import per_seed_metrics

    out = per_seed_metrics(per_seed, totals=totals(per_seed))
    return {**drop_within_seed({k: v for k, v in out.items() if k != "per_seed"}), "per_seed": out["per_seed"]}


def regret_curves(res: dict, name: str, insts: list[dict], setup: str):
    """(runs, K) cumulative regret of an agent's runs on one setup, from one seed's arrays."""
    import numpy as np

    idx = res[f"{name}/instance"]
    sel = np.array([insts[i]["setup"] == setup for i in idx])
    v_star = np.array([insts[i]["v_star"] for i in idx])[sel][:, None]
    return np.cumsum(np.maximum(v_star - res[f"{name}/V_r"][sel], 0.0), axis=1)


def plot_regret(seed_res: dict, seed_insts: dict, per_seed: dict, ep, agents: list[str], path) -> None:
    """Per setup, every agent's mean regret over all seeds' instances (band: the per-seed means'
    min-max); the main agent's per-seed mean curves thin, its per-seed slopes in the legend."""
    import numpy as np

    from stages.common.plots import new_figure, save_png

    seeds = list(seed_res)
    setups = sorted({i["setup"] for s in seeds for i in seed_insts[s]})
    fig, axes = new_figure(1, len(setups), figsize=(6.2 * len(setups), 4.6), squeeze=False)
    main = ep.main_agent
    for ax, s in zip(axes[0], setups):
        K_max = 1
        for c, name in enumerate(agents):
            if s not in per_seed[seeds[0]]["agents"][name]["setups"]:
                continue
            per = [regret_curves(seed_res[sd], name, seed_insts[sd], s) for sd in seeds]
            means = np.stack([p.mean(axis=0) for p in per])                      # (seeds, K)
            pooled = np.concatenate(per).mean(axis=0)
            k = np.arange(1, pooled.shape[0] + 1)
            K_max = max(K_max, len(k))
            slopes = [per_seed[sd]["agents"][name]["setups"][s]["slope"] for sd in seeds]
            lab = (f"{name}: slope per seed {min(slopes):.2f}-{max(slopes):.2f} (mean {np.mean(slopes):.2f})")
            ax.plot(k, pooled, color=f"C{c}", lw=2 if name == main else 1.2, label=lab)
            ax.fill_between(k, means.min(axis=0), means.max(axis=0), color=f"C{c}", alpha=0.12, lw=0)
            if name == main:
                for row in means:
                    ax.plot(k, row, color=f"C{c}", lw=0.6, alpha=0.5)
                kf = fit_points(len(k), ep.fit_from)
                ax.axvspan(kf[0], kf[-1], color="k", alpha=0.04, lw=0, label=f"fit window [{ep.fit_from:g}K, K]")
        uni = [i for sd in seeds for i in seed_insts[sd] if i["setup"] == s]
        k = np.geomspace(1, K_max, 50)
        ax.plot(k, np.mean([i["v_star"] - i["uniform_values"][0] for i in uni]) * k, ":", color="grey",
                label="uniform policy (linear regret)")
        ax.set(xscale="log", yscale="log", xlabel="episode K", ylabel="cumulative regret",
               title=f"{s}: mean over {len(uni)} binding instances of {len(seeds)} seeds\n"
                     f"(band: the seeds' mean curves, min-max; thin: {main} per seed)")
        ax.legend(fontsize=7)
    save_png(fig, path)


def plot_violations(seed_res: dict, seed_insts: dict, ep, agents: list[str], path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    fig, (ax, ax2) = new_figure(1, 2, figsize=(12.5, 4.6))
    seeds = list(seed_res)
    for c, name in enumerate(agents):
        margins = []
        for sd in seeds:
            res, insts = seed_res[sd], seed_insts[sd]
            thr = np.array([insts[i]["threshold"] for i in res[f"{name}/instance"]])[:, None]
            margins.append(res[f"{name}/V_u"] - thr)                              # >= 0: feasible
        margin = np.concatenate(margins)
        viol = margin < -ep.violation_tol
        k = np.arange(1, margin.shape[1] + 1)
        tot = viol.sum(axis=0).cumsum()
        ax.plot(k, np.maximum(tot, 0.5), color=f"C{c}", lw=2 if name == ep.main_agent else 1.2,
                label=f"{name}: {int(tot[-1])} violating episodes in {margin.shape[0]} runs")
        ax2.plot(k, margin.min(axis=0), color=f"C{c}", lw=1.5 if name == ep.main_agent else 0.8, label=name)
    ax.set(xscale="log", yscale="log", xlabel="episode k", ylabel=f"cumulative violating episodes ({len(seeds)} seeds)",
           title=f"episodes with V_u(pi_k) < b - {ep.violation_tol:g} (0 drawn at 0.5)")
    ax.legend(fontsize=7, loc="upper left")
    ax2.axhline(0, color="k", lw=0.8)
    ax2.set(xscale="log", xlabel="episode k", ylabel="min over runs of V_u(pi_k) - b",
            title="per-episode utility margin (exact); below 0 = violation")
    ax2.legend(fontsize=7, loc="lower right")
    save_png(fig, path)


def by_seed(insts: list[dict]) -> dict[int, list[dict]]:
    """{seed: its instances in index order}."""
    out: dict[int, list[dict]] = {}
    for rec in insts:
        out.setdefault(rec["seed"], []).append(rec)
    for seed, recs in out.items():
        if [r["index"] for r in recs] != list(range(len(recs))):
            raise ValueError(f"seed {seed}: instance indices {[r['index'] for r in recs]} are not 0..n-1")
    return out


def main() -> None:
    with stage("linear_cmdp", "evaluate", LinearCmdpParams) as ctx:
        import json

        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import write_csv

        from .instances import load_instances

        seeds = list(ctx.seeds)
        seed_insts = by_seed(load_instances(ctx.path(INSTANCES)))
        res = dict(np.load(ctx.path(RESULTS)))
        prep = json.loads(ctx.path(PREPARE_METRICS).read_text())["per_seed"]
        ep = ctx.params.evaluate
        agents = [a.name for a in ctx.params.train.agents]
        seed_res = {sd: of_seed(res, sd) for sd in seeds}
        for sd in seeds:
            missing = [a for a in agents if f"{a}/V_r" not in seed_res[sd]]
            if sd not in seed_insts or str(sd) not in prep or missing:
                fail(f"{RESULTS} / {INSTANCES} do not hold verdict seed {sd} (agents missing: {missing}); "
                     f"run `dvc repro stages/linear_cmdp/dvc.yaml:linear_cmdp-train`")
        per_seed = {}
        for sd in seeds:
            per_seed[sd] = seed_figures(seed_res[sd], seed_insts[sd], sd, agents, ep, prep[str(sd)])
            m = per_seed[sd]
            sl = "; ".join(f"{s} slope {f['slope']:.3f}" for s, f in m["main"]["setups"].items())
            print(f"  seed {sd}: {ep.main_agent} violating episodes {m['main']['violating_episodes']}, {sl}; "
                  f"{ep.no_pessimism_agent} {m['no_pessimism']['violating_episodes']}, "
                  f"{ep.primal_dual_agent} {m['primal_dual']['violating_episodes']}", flush=True)
        write_json(ctx.path(METRICS), seed_metrics(per_seed))
        rows = []
        for a in agents:
            for s in per_seed[seeds[0]]["agents"][a]["setups"]:
                reg = np.concatenate([regret_curves(seed_res[sd], a, seed_insts[sd], s) for sd in seeds]).mean(axis=0)
                ks = np.unique(np.round(np.geomspace(1, len(reg), 60)).astype(int))
                for k in ks:
                    rows.append({"K": int(k), "setup": s, "agent": a, "regret_mean": float(reg[k - 1])})
                ctx.run.log_curve(f"regret.{a}.{s}", reg[ks - 1].tolist(), ks.tolist())
        write_csv(ctx.path(CSV_REGRET), rows)
        vrows = []
        for a in agents:
            viol = []
            for sd in seeds:
                r, insts = seed_res[sd], seed_insts[sd]
                thr = np.array([insts[i]["threshold"] for i in r[f"{a}/instance"]])[:, None]
                viol.append((r[f"{a}/V_u"] - thr) < -ep.violation_tol)
            tot = np.concatenate(viol).sum(axis=0).cumsum()
            for k in np.unique(np.round(np.geomspace(1, len(tot), 60)).astype(int)):
                vrows.append({"episode": int(k), "agent": a, "cumulative_violating_episodes": int(tot[k - 1])})
        write_csv(ctx.path(CSV_VIOLATIONS), vrows)
        plot_regret(seed_res, seed_insts, per_seed, ep, agents, ctx.path(PLOT_REGRET))
        plot_violations(seed_res, seed_insts, ep, agents, ctx.path(PLOT_VIOLATIONS))
        for a in agents:
            v = [per_seed[sd]["agents"][a]["violating_episodes"] for sd in seeds]
            sl = ", ".join(f"{s} slope per seed " + " ".join(f"{per_seed[sd]['agents'][a]['setups'][s]['slope']:.3f}"
                                                              for sd in seeds)
                           for s in per_seed[seeds[0]]["agents"][a]["setups"])
            print(f"  {a}: K={per_seed[seeds[0]]['agents'][a]['episodes']}, violating episodes per seed {v}; {sl}",
                  flush=True)


if __name__ == "__main__":
    main()
