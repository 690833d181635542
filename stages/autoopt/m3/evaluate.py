"""autoopt m3-evaluate: BOBD (AutoOpt's M3) against IPOPT multi-start and a GA on a benchmark
with known optima (stages/autoopt/m3/problems.py), and against NSGA-II on a multi-objective set.

Protocol (fixed before any result was seen; see bobd.py and baselines.py for the methods):

* every verdict seed (``ctx.seeds``, claims contract v2) runs the whole benchmark: every problem x
  run r (the run's draws come from :func:`run_seed` of the verdict seed and r, so no two verdict
  seeds share a draw and none is a calibration seed): BOBD with ``budget`` evaluations first
  (``high_dim_budget`` on the high-dimensional class); IPOPT
  multi-start and the GA then get the evaluations BOBD actually used on that problem and run;
  each verdict seed's figures go to ``per_seed`` (stages/common/seeds.per_seed_metrics), their
  mean over seeds beside them; the problem set and the protocol do not depend on the seed;
* success: feasible (largest violation <= ``feas_tol``) and gap = (f - f*) / max(1, |f*|) <=
  ``rel_tol`` (all benchmark models minimise; f* the stated optimum); the mean gap is over the
  feasible runs; a gap below -rel_tol (better than the stated optimum) is counted as
  ``beats_known`` (it would mean a stated optimum is wrong);
* per class: success rate, mean gap, feasible rate, evaluations, wall time; "the complex set"
  is m3_problems.COMPLEX_CLASSES, pooled; ``best_class_margin_vs_<baseline>`` is the largest
  BOBD-minus-baseline success rate over all single-objective classes (and which class);
* the paired comparison on the complex set: per problem, BOBD's success rate over its
  runs minus the baseline's (same seeds), their mean (= the pooled margin) with scipy's BCa
  bootstrap interval that resamples problems within their class (``n_boot``, ``ci_level``;
  stats.py, through stages/common/inference.py), and the problems won / lost / tied (within one
  verdict seed: context beside the claims, which are judged over the seeds); IPOPT restricted to
  the starts that ended within BOBD's evaluations;
* multi-objective: BOBD's final non-dominated set vs pymoo's NSGA-II with the same evaluations,
  by hypervolume (pymoo's indicator, reference point m3_problems.HV_REF); ratio BOBD / NSGA-II.

Outputs: paths.M3_METRICS (JSON), paths.M3_RUNS (CSV, one row per method x problem x run),
paths.M3_PLOT_DIR/<class>.png (success rate and mean gap per method), multi.png (fronts).
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from stages.common.runtime.stage import stage

from ..params import AutoOptParams
from ..paths import M3_METRICS, M3_PLOT_DIR, M3_RUNS

METHODS = ("bobd", "ipopt", "ga")


def run_seed(verdict_seed: int, run: int) -> int:
    """The draws' seed of run ``run`` of a verdict seed: from numpy's SeedSequence of the pair, so
    runs of different verdict seeds never share a seed (the old ``seed + r`` did)."""
    return int(np.random.SeedSequence([verdict_seed, run]).generate_state(1)[0])


def budget_of(prob, mp) -> int:
    """BOBD's evaluation budget on ``prob``: ``high_dim_budget`` on the high-dimensional class,
    ``budget`` elsewhere (the baselines then get what BOBD used)."""
    return mp.high_dim_budget if prob.cls == "high_dim" else mp.budget


_WORKER: dict = {}


def _job(args) -> list[dict]:
    """One (verdict seed, problem index, run) in a worker process (the problem list is built once a
    process: its models are closures, which do not pickle)."""
    s, i, r, mp = args
    if "probs" not in _WORKER:
        import warnings as w

        from stages.common.device import limit_threads

        from .problems import problems
        limit_threads(default=1)
        w.filterwarnings("ignore", category=RuntimeWarning)
        _WORKER["probs"] = problems()
    return [{**row, "verdict_seed": s, "run": r}
            for row in run_problem(_WORKER["probs"][i], run_seed(s, r), mp)]


def run_jobs(jobs: list[tuple[int, int, int]], mp, desc: str) -> list[dict]:
    """Every (verdict seed, index into problems(), run) on ``mp.workers`` processes (forked, one
    thread each), rows in the jobs' order whatever the finishing order; a progress line every 5 s."""
    from tqdm import tqdm

    from stages.common.forkpool import fork_pool

    args = [(s, i, r, mp) for s, i, r in jobs]
    if mp.workers == 1:
        return [row for a in tqdm(args, desc=desc, mininterval=5) for row in _job(a)]
    with fork_pool(mp.workers) as pool:
        out = list(tqdm(pool.imap(_job, args, chunksize=1), total=len(args), desc=desc, mininterval=5))
    return [row for rows in out for row in rows]


def run_problem(prob, seed: int, mp) -> list[dict]:
    """The three methods on one problem and seed; one row each."""
    from .bobd import bobd
    from .baselines import ga_alone, ipopt_multistart

    opts = dict(max_iter=mp.ipopt_max_iter, feas_tol=mp.feas_tol)
    rb = bobd(prob.build(), budget=budget_of(prob, mp), seed=seed, pop_size=mp.bobd_pop,
              nonconvex_upper=mp.nonconvex_upper, upper_ea=mp.upper_ea, **opts)
    ri = ipopt_multistart(prob.build(), budget=rb.evals, seed=seed, **opts)
    rg = ga_alone(prob.build(), budget=rb.evals, seed=seed, pop_size=mp.ga_pop, feas_tol=mp.feas_tol)
    rows = []
    for method, r in zip(METHODS, (rb, ri, rg)):
        gap = _gap(r.objective, prob.optimum)
        row = {"method": method, "problem": prob.name, "class": prob.cls, "seed": seed,
               "objective": r.objective, "optimum": prob.optimum, "gap": gap,
               "feasible": r.feasible, "max_violation": r.max_violation,
               "success": _success(r.feasible, r.max_violation, gap, mp),
               "beats_known": bool(r.feasible and gap < -mp.rel_tol),
               "evals": r.evals, "seconds": r.seconds,
               "upper_vars": len(rb.upper_vars) if method == "bobd" else "",
               "within_budget_success": "", "within_budget_evals": ""}
        if method == "ipopt":   # the best of the starts that ended within BOBD's evaluations
            w = r.extra["within_budget"]
            row["within_budget_success"] = _success(w["feasible"], w["max_violation"],
                                                    _gap(w["objective"], prob.optimum), mp)
            row["within_budget_evals"] = w["evals"]
        rows.append(row)
    return rows


def _gap(objective: float, optimum: float) -> float:
    return (objective - optimum) / max(1.0, abs(optimum))


def _success(feasible: bool, violation: float, gap: float, mp) -> bool:
    return bool(feasible and violation <= mp.feas_tol and gap <= mp.rel_tol)


def per_problem(rows: list[dict], key: str = "success") -> dict[str, dict]:
    """problem -> {"class", method: mean of ``key`` over its runs}."""
    out: dict[str, dict] = {}
    for r in rows:
        d = out.setdefault(r["problem"], {"class": r["class"]})
        d.setdefault(r["method"], []).append(float(r[key]) if r[key] != "" else np.nan)
    for d in out.values():
        for m in METHODS:
            if m in d:
                d[m] = float(np.mean(d[m]))
    return out


def paired(rows: list[dict], mp, seed: int, base: str) -> dict:
    """BOBD minus ``base`` on the same problems and seeds: the per-problem success differences'
    mean (= the pooled margin, every problem having the same runs), its class-stratified bootstrap
    interval (stats.paired_bootstrap) and the problems won, lost and tied."""
    from .stats import paired_bootstrap, sign_counts

    pp = per_problem(rows)
    names = sorted(pp)
    diff = [pp[n]["bobd"] - pp[n][base] for n in names]
    ci = paired_bootstrap(diff, [pp[n]["class"] for n in names], n_boot=mp.n_boot, level=mp.ci_level, seed=seed)
    return {**ci, **sign_counts(diff)}


def summarise(rows: list[dict]) -> dict:
    """success / mean gap (feasible runs) / feasible rate / evals / seconds per method."""
    out = {}
    for method in METHODS:
        rs = [r for r in rows if r["method"] == method]
        feas = [r for r in rs if r["feasible"]]
        out[method] = {"success": float(np.mean([r["success"] for r in rs])),
                       "mean_gap": float(np.mean([r["gap"] for r in feas])) if feas else None,
                       "feasible": float(np.mean([r["feasible"] for r in rs])),
                       "evals": float(np.mean([r["evals"] for r in rs])),
                       "seconds": float(np.mean([r["seconds"] for r in rs])),
                       "beats_known": int(sum(r["beats_known"] for r in rs)),
                       "runs": len(rs)}
    return out


def run_multi(mp, verdict_seed: int) -> tuple[dict, dict]:
    from pymoo.indicators.hv import HV

    from .bobd import bobd_multi
    from .baselines import nsga2
    from .problems import HV_REF, MULTI, zdt, zdt_numpy

    hv = HV(ref_point=np.array(HV_REF))
    per, fronts = {}, {}
    names = [n for n in MULTI if not mp.problems or n in mp.problems]
    for name in names:
        k, n = MULTI[name]
        ratios, rows = [], []
        for r in range(mp.runs):
            seed = run_seed(verdict_seed, r)
            t0 = time.perf_counter()
            Fb, eb = bobd_multi(zdt(k, n)(), budget=mp.budget, seed=seed, pop_size=mp.bobd_pop,
                                max_iter=mp.ipopt_max_iter, nonconvex_upper=mp.nonconvex_upper)
            tb = time.perf_counter() - t0
            t0 = time.perf_counter()
            Fn, en = nsga2(zdt_numpy(k), np.zeros(n), np.ones(n), 2, budget=eb, seed=seed, pop_size=mp.nsga_pop)
            tn = time.perf_counter() - t0
            hb, hn = float(hv(Fb)), float(hv(Fn))
            ratios.append(hb / hn if hn > 0 else None)
            rows.append({"seed": seed, "hv_bobd": hb, "hv_nsga2": hn, "evals_bobd": eb, "evals_nsga2": en,
                         "seconds_bobd": tb, "seconds_nsga2": tn})
            if r == 0:
                fronts[name] = (Fb, Fn)
        good = [x for x in ratios if x is not None]
        per[name] = {"hv_ratio": float(np.mean(good)) if good else None, "runs": rows}
    vals = [v["hv_ratio"] for v in per.values() if v["hv_ratio"] is not None]
    return {"hv_ratio": float(np.mean(vals)) if vals else None, "problems": per}, fronts


def plot_class(name: str, summ: dict, path) -> None:
    from stages.common.plots import new_figure, save_png

    fig, (a1, a2) = new_figure(1, 2, figsize=(8, 3.2))
    succ = [summ[m]["success"] for m in METHODS]
    gaps = [summ[m]["mean_gap"] if summ[m]["mean_gap"] is not None else np.nan for m in METHODS]
    a1.bar(METHODS, succ, color=["C0", "C1", "C2"])
    a1.set_ylim(0, 1.05)
    a1.set_ylabel("success rate")
    a1.set_title(f"{name}: success (runs {summ['bobd']['runs']} a method)")
    a2.bar(METHODS, gaps, color=["C0", "C1", "C2"])
    a2.set_ylabel("mean relative gap (feasible runs)")
    a2.set_yscale("symlog", linthresh=1e-3)
    a2.set_title("mean gap (lower is better)")
    save_png(fig, path)


def plot_multi(fronts: dict, path) -> None:
    from stages.common.plots import new_figure, save_png

    fig, axes = new_figure(1, max(1, len(fronts)), figsize=(4 * max(1, len(fronts)), 3.2))
    axes = np.atleast_1d(axes)
    for ax, (name, (Fb, Fn)) in zip(axes, fronts.items()):
        ax.scatter(Fn[:, 0], Fn[:, 1], s=10, label="NSGA-II")
        ax.scatter(Fb[:, 0], Fb[:, 1], s=10, marker="x", label="BOBD")
        ax.set_title(name)
        ax.set_xlabel("f1")
        ax.set_ylabel("f2")
        ax.legend()
    save_png(fig, path)


def seed_metrics(rows: list[dict], mp, verdict_seed: int) -> dict:
    """One verdict seed's figures from its rows (every problem x run of that seed)."""
    from .problems import CLASSES, COMPLEX_CLASSES

    classes = [c for c in CLASSES if any(r["class"] == c for r in rows)]
    per_class = {c: summarise([r for r in rows if r["class"] == c]) for c in classes}
    cx = [r for r in rows if r["class"] in COMPLEX_CLASSES]
    out: dict = {"classes": per_class}
    if cx:
        complex_ = summarise(cx)
        within = [r for r in cx if r["method"] == "ipopt"]
        within_rate = float(np.mean([r["within_budget_success"] for r in within]))
        out["complex"] = {
            "problems": len({r["problem"] for r in cx}),
            "runs": complex_["bobd"]["runs"],
            "success": {m: complex_[m]["success"] for m in METHODS},
            "mean_gap": {m: complex_[m]["mean_gap"] for m in METHODS},
            "evals": {m: complex_[m]["evals"] for m in METHODS},
            "seconds": {m: complex_[m]["seconds"] for m in METHODS},
            "margin_vs_ipopt": complex_["bobd"]["success"] - complex_["ipopt"]["success"],
            "margin_vs_ga": complex_["bobd"]["success"] - complex_["ga"]["success"],
            # the controls of the two musts: each baseline without BOBD's other half (the GA with no
            # lower level against IPOPT; IPOPT with no upper level against the GA)
            "ga_minus_ipopt": complex_["ga"]["success"] - complex_["ipopt"]["success"],
            "ipopt_minus_ga": complex_["ipopt"]["success"] - complex_["ga"]["success"],
            "margin_vs_ipopt_ci": paired(cx, mp, verdict_seed, "ipopt"),
            "margin_vs_ga_ci": paired(cx, mp, verdict_seed + 1, "ga"),
            # IPOPT restricted to the starts that ended within BOBD's evaluations (its last
            # start may overshoot them): the strictly-equal-evaluations reading
            "ipopt_within_budget": {"success": within_rate,
                                    "margin_vs_ipopt": complex_["bobd"]["success"] - within_rate},
        }
    for base in ("ipopt", "ga"):
        margins = {c: s["bobd"]["success"] - s[base]["success"] for c, s in per_class.items()}
        best = max(margins, key=margins.get) if margins else None
        out[f"best_class_margin_vs_{base}"] = margins[best] if best else None
        out[f"best_class_vs_{base}"] = best
        out[f"class_margins_vs_{base}"] = margins
    out["beats_known"] = int(sum(r["beats_known"] for r in rows))
    return out


def main() -> None:
    with stage("autoopt", "m3-evaluate", AutoOptParams) as ctx:
        from stages.common.device import limit_threads
        from stages.common.io import atomic_dir, write_json
        from stages.common.plots import write_csv
        from stages.common.seeds import per_seed_metrics

        from .problems import CLASSES, COMPLEX_CLASSES, problems

        limit_threads(default=1)
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        mp = ctx.params.m3
        seeds = list(ctx.seeds)
        everything = problems()
        index = [i for i, p in enumerate(everything) if not mp.problems or p.name in mp.problems]
        probs = [everything[i] for i in index]
        t0 = time.perf_counter()
        results: dict[int, dict] = {}
        fronts: dict = {}
        jobs = [(s, i, r) for s in seeds for i in index for r in range(mp.runs)]
        rows = run_jobs(jobs, mp, f"m3 seeds {seeds} x problems x runs ({mp.workers} processes)")
        for s in seeds:
            results[s] = seed_metrics([r for r in rows if r["verdict_seed"] == s], mp, s)
            if mp.multi:
                results[s]["multi"], f = run_multi(mp, s)
                fronts = fronts or f
            print(f"  seed {s}: complex BOBD - IPOPT {results[s].get('complex', {}).get('margin_vs_ipopt')}", flush=True)
        classes = [c for c in CLASSES if any(r["class"] == c for r in rows)]
        per_class = {c: summarise([r for r in rows if r["class"] == c]) for c in classes}
        cx = [r for r in rows if r["class"] in COMPLEX_CLASSES]
        metrics = per_seed_metrics(
            results, complex_classes=list(COMPLEX_CLASSES), protocol=mp.model_dump(),
            problems={p.name: {"class": p.cls, "optimum": p.optimum, "source": p.source,
                               "upper_vars": next((r["upper_vars"] for r in rows
                                                   if r["problem"] == p.name and r["method"] == "bobd"), None)}
                      for p in probs})
        metrics["seconds"] = time.perf_counter() - t0

        with atomic_dir(ctx.path(M3_PLOT_DIR)) as plot_dir:
            for c in classes:
                plot_class(c, per_class[c], plot_dir / f"{c}.png")
            if cx:
                plot_class("complex set", summarise(cx), plot_dir / "complex.png")
            if fronts:
                plot_multi(fronts, plot_dir / "multi.png")
        write_csv(ctx.path(M3_RUNS), rows)
        write_json(ctx.path(M3_METRICS), {"m3": metrics})
        flat = {f"m3.{c}.{m}.success": s[m]["success"] for c, s in per_class.items() for m in METHODS}
        flat.update({f"m3.seed{s}.complex.margin_vs_ipopt": results[s]["complex"]["margin_vs_ipopt"]
                     for s in seeds if "complex" in results[s]})
        ctx.run.log_metrics(flat)
        print(f"[m3] {len(rows)} runs ({len(seeds)} verdict seeds) in {metrics['seconds']:.1f}s")
        for c, s_ in per_class.items():
            print(f"  {c:18s} " + "  ".join(f"{m} {s_[m]['success']:.2f}" for m in METHODS) + "  (all seeds)")
        for s in seeds:
            if "complex" in results[s]:
                c = results[s]["complex"]
                ci = c["margin_vs_ipopt_ci"]
                print(f"  seed {s}: complex set ({c['problems']} problems x {mp.runs} runs) "
                      + "  ".join(f"{m} {c['success'][m]:.3f}" for m in METHODS)
                      + f"; BOBD - IPOPT {ci['mean']:+.3f} [{ci['low']:+.3f}, {ci['high']:+.3f}],"
                      f" GA - IPOPT {c['ga_minus_ipopt']:+.3f}")
            if mp.multi:
                print(f"  seed {s}: multi-objective hypervolume ratio BOBD / NSGA-II: {results[s]['multi']['hv_ratio']}")


if __name__ == "__main__":
    main()
