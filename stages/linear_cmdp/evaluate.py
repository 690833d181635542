"""linear_cmdp evaluate: violations per episode, regret vs K and its log-log slope, plots.

* Regret of a run after k episodes: sum_{j<=k} max(V* - V_r(pi_j), 0), V* the exact constrained
  optimum (HiGHS LP); the positive part is the official ``sample_and_compute_regret``'s (it only
  matters for policies that violate, whose V_r may exceed V*).
* An episode violates when the exact V_u(pi_k) < b - ``violation_tol`` (1e-9 by default).
* Slope: least-squares slope of log(mean regret over a setup's instances) on log k, over 200
  log-spaced episodes in [fit_from * K, K]; the interval resamples the instances (bootstrap) and
  refits. ``slope_over_logK`` is the same fit of regret / log k (one log factor of O~ removed).
* ``main`` / ``primal_dual`` repeat the metrics of the agents named by evaluate.main_agent and
  evaluate.primal_dual_agent, so claims.yaml does not depend on agent names.

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


def plot_regret(res, m: dict, insts: list[dict], ep, agents: list[str], path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    setups = sorted({i["setup"] for i in insts})
    fig, axes = new_figure(1, len(setups), figsize=(6.2 * len(setups), 4.6), squeeze=False)
    main = ep.main_agent
    for ax, s in zip(axes[0], setups):
        for c, name in enumerate(agents):
            am = m["agents"][name]
            if s not in am["setups"]:
                continue
            idx = res[f"{name}/instance"]
            sel = np.array([insts[i]["setup"] == s for i in idx])
            v_star = np.array([insts[i]["v_star"] for i in idx])[sel][:, None]
            reg = np.cumsum(np.maximum(v_star - res[f"{name}/V_r"][sel], 0.0), axis=1)
            k = np.arange(1, reg.shape[1] + 1)
            mean = reg.mean(axis=0)
            f = am["setups"][s]
            lab = f"{name}: slope {f['slope']:.2f} [{f['ci_low']:.2f}, {f['ci_high']:.2f}]"
            ax.plot(k, mean, color=f"C{c}", lw=2 if name == main else 1.2, label=lab)
            ax.fill_between(k, reg.min(axis=0), reg.max(axis=0), color=f"C{c}", alpha=0.12, lw=0)
            if name == main:
                kf = fit_points(reg.shape[1], ep.fit_from)
                ax.plot(kf, np.exp(f["intercept"]) * kf ** f["slope"], "k--", lw=1.2,
                        label=f"fit over [{ep.fit_from:g}K, K]: K^{f['slope']:.2f}")
        uni = [i for i in insts if i["setup"] == s]
        K = max(m["agents"][a]["episodes"] for a in agents if s in m["agents"][a]["setups"])
        k = np.geomspace(1, K, 50)
        ax.plot(k, np.mean([i["v_star"] - i["uniform_values"][0] for i in uni]) * k, ":", color="grey",
                label="uniform policy (linear regret)")
        ax.set(xscale="log", yscale="log", xlabel="episode K", ylabel="cumulative regret",
               title=f"{s}: mean over {len(uni)} binding instances (band: min-max)")
        ax.legend(fontsize=7)
    save_png(fig, path)


def plot_violations(res, m: dict, insts: list[dict], ep, agents: list[str], path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    fig, (ax, ax2) = new_figure(1, 2, figsize=(12.5, 4.6))
    for c, name in enumerate(agents):
        idx = res[f"{name}/instance"]
        thr = np.array([insts[i]["threshold"] for i in idx])[:, None]
        margin = res[f"{name}/V_u"] - thr                                        # >= 0: feasible
        viol = margin < -ep.violation_tol
        k = np.arange(1, margin.shape[1] + 1)
        tot = viol.sum(axis=0).cumsum()
        ax.plot(k, np.maximum(tot, 0.5), color=f"C{c}", lw=2 if name == ep.main_agent else 1.2,
                label=f"{name}: {int(tot[-1])} violating episodes in {margin.shape[0]} runs")
        ax2.plot(k, margin.min(axis=0), color=f"C{c}", lw=1.5 if name == ep.main_agent else 0.8, label=name)
    ax.set(xscale="log", yscale="log", xlabel="episode k", ylabel="cumulative violating episodes (all runs)",
           title=f"episodes with V_u(pi_k) < b - {ep.violation_tol:g} (0 drawn at 0.5)")
    ax.legend(fontsize=7, loc="upper left")
    ax2.axhline(0, color="k", lw=0.8)
    ax2.set(xscale="log", xlabel="episode k", ylabel="min over runs of V_u(pi_k) - b",
            title="per-episode utility margin (exact); below 0 = violation")
    ax2.legend(fontsize=7, loc="lower right")
    save_png(fig, path)


def main() -> None:
    with stage("linear_cmdp", "evaluate", LinearCmdpParams) as ctx:
        import json

        import numpy as np

        from stages.common.io import write_json
        from stages.common.plots import write_csv

        from .instances import load_instances

        insts = load_instances(ctx.path(INSTANCES))
        res = dict(np.load(ctx.path(RESULTS)))
        ep = ctx.params.evaluate
        agents = [a.name for a in ctx.params.train.agents]
        missing = [a for a in agents if f"{a}/V_r" not in res]
        if missing:
            fail(f"{RESULTS} has no runs of agents {missing}; run `dvc repro stages/linear_cmdp/dvc.yaml:linear_cmdp-train`")
        rng = np.random.default_rng([ctx.seed, RNG_BOOT])
        m = {"agents": {a: agent_metrics(res, a, insts, ep, rng) for a in agents}}
        m["main"] = m["agents"][ep.main_agent]
        m["primal_dual"] = m["agents"][ep.primal_dual_agent]
        K_main = m["main"]["episodes"]
        m["uniform"] = uniform_metrics(insts, K_main, ep.violation_tol)
        prep = json.loads(ctx.path(PREPARE_METRICS).read_text())
        m["optimum"] = prep["optimum"]
        m["instances"] = {"kept": prep["instances"], "rejected_non_binding": prep["rejected_non_binding"],
                          **{f"{s}_rejected": v["rejected_non_binding"] for s, v in prep["setups"].items()}}
        m["fit"] = {"K": K_main, "from_episode": int(fit_points(K_main, ep.fit_from)[0]), "points": FIT_POINTS}
        write_json(ctx.path(METRICS), m)
        rows = []
        for a in agents:
            idx = res[f"{a}/instance"]
            for s, f in m["agents"][a]["setups"].items():
                sel = np.array([insts[i]["setup"] == s for i in idx])
                v_star = np.array([insts[i]["v_star"] for i in idx])[sel][:, None]
                reg = np.cumsum(np.maximum(v_star - res[f"{a}/V_r"][sel], 0.0), axis=1).mean(axis=0)
                ks = np.unique(np.round(np.geomspace(1, len(reg), 60)).astype(int))
                for k in ks:
                    rows.append({"K": int(k), "setup": s, "agent": a, "regret_mean": float(reg[k - 1]),
                                 "fit": float(np.exp(f["intercept"]) * k ** f["slope"])})
                ctx.run.log_curve(f"regret.{a}.{s}", reg[ks - 1].tolist(), ks.tolist())
        write_csv(ctx.path(CSV_REGRET), rows)
        vrows = []
        for a in agents:
            thr = np.array([insts[i]["threshold"] for i in res[f"{a}/instance"]])[:, None]
            tot = ((res[f"{a}/V_u"] - thr) < -ep.violation_tol).sum(axis=0).cumsum()
            for k in np.unique(np.round(np.geomspace(1, len(tot), 60)).astype(int)):
                vrows.append({"episode": int(k), "agent": a, "cumulative_violating_episodes": int(tot[k - 1])})
        write_csv(ctx.path(CSV_VIOLATIONS), vrows)
        plot_regret(res, m, insts, ep, agents, ctx.path(PLOT_REGRET))
        plot_violations(res, m, insts, ep, agents, ctx.path(PLOT_VIOLATIONS))
        for a in agents:
            am = m["agents"][a]
            sl = ", ".join(f"{s} slope {f['slope']:.3f} [{f['ci_low']:.3f}, {f['ci_high']:.3f}] regret {f['regret_at_K']:.0f}"
                           for s, f in am["setups"].items())
            print(f"  {a}: K={am['episodes']}, violating episodes {am['violating_episodes']} "
                  f"(max shortfall {am['max_violation']:.3g}); {sl}", flush=True)


if __name__ == "__main__":
    main()
