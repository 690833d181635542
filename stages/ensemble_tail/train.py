"""ensemble_tail train: the Monte-Carlo sweep over sample sizes.

For each problem (the stochastic LP; the regression model selection when enabled) and each n
of its grid: ``replications`` independent data sets of size n, on each the base learner (SAA
on all n points), MoVE, ROVE, ROVEs (when enabled) and the bagging-average; the number of
replications whose excess risk exceeds the problem's threshold (the tail event) and the mean
excess risk of every method. Everything is vectorized over replications (in chunks) and
subsamples. Randomness: one numpy stream per (seed, problem, n, chunk).

Outputs: data/ensemble_tail/tails.json (counts), reports/ensemble_tail/train.json (timings).
"""
from __future__ import annotations

import time

from stages.common.runtime.stage import stage

from .params import EnsembleTailParams
from .paths import TAILS, TRAIN_REPORT

PROBLEM_IDS = {"lp": 0, "regression": 1}


def sweep(problem: str, make_costs, excess, n_grid: list[int], R: int, chunk: int, ens, threshold: float,
          seed: int) -> dict:
    """Tail-event counts and mean excess risk per method and n (one problem)."""
    import numpy as np
    from tqdm import tqdm

    from .ensemble import run_all

    methods = ["base", "move", "rove"] + (["roves"] if ens.roves else []) + ["bagging"]
    counts = {m: [] for m in methods}
    mean_ex = {m: [] for m in methods}
    for n in tqdm(n_grid, desc=f"ensemble_tail {problem}", mininterval=2, unit="n"):
        c = {m: 0 for m in methods}
        s = {m: 0.0 for m in methods}
        for j, start in enumerate(range(0, R, chunk)):
            r = min(chunk, R - start)
            rng = np.random.default_rng([seed, PROBLEM_IDS[problem], n, j])
            out = run_all(make_costs(rng, r, n), rng, ens.k, ens.B, ens.k1, ens.k2, ens.B1, ens.B2,
                          ens.auto_epsilon_prob, ens.roves)
            for m in methods:
                e = out[m] @ excess if m == "bagging" else excess[out[m]]
                c[m] += int((e > threshold).sum())
                s[m] += float(e.sum())
        for m in methods:
            counts[m].append(c[m])
            mean_ex[m].append(s[m] / R)
    return {"n_grid": list(n_grid), "replications": R, "threshold": threshold, "methods": methods,
            "counts": counts, "mean_excess": mean_ex}


def main() -> None:
    with stage("ensemble_tail", "train", EnsembleTailParams) as ctx:
        import numpy as np

        from stages.common.io import write_json

        from . import problems as P

        p = ctx.params.train
        t0, c0 = time.perf_counter(), time.process_time()
        lp = p.lp
        cvec = np.asarray(lp.costs, float)
        res = {"lp": sweep("lp", lambda rng, r, n: P.lp_costs(rng, cvec, lp.tail_index, r, n),
                           P.true_excess("lp", c=cvec), p.n_grid, p.replications, p.chunk, p.ensembles,
                           lp.threshold, ctx.seed)}
        res["lp"]["tail_index"] = lp.tail_index
        timing = {"lp_wall_s": time.perf_counter() - t0, "lp_cpu_s": time.process_time() - c0}
        rg = p.regression
        if rg.enabled:
            t1, c1 = time.perf_counter(), time.process_time()
            beta, models = P.regression_models(rg.dim, rg.sq_dists)
            res["regression"] = sweep("regression",
                                      lambda rng, r, n: P.regression_costs(rng, beta, models, rg.tail_index, r, n),
                                      P.true_excess("regression", dists=rg.sq_dists), rg.n_grid, rg.replications,
                                      p.chunk, p.ensembles, rg.threshold, ctx.seed)
            res["regression"]["tail_index"] = rg.tail_index
            timing.update(regression_wall_s=time.perf_counter() - t1, regression_cpu_s=time.process_time() - c1)
        write_json(ctx.path(TAILS), res)
        timing.update(wall_s=time.perf_counter() - t0, cpu_s=time.process_time() - c0)
        write_json(ctx.path(TRAIN_REPORT), timing)
        for prob, r in res.items():
            for m in r["methods"]:
                ctx.run.log_curve(f"{prob}.tail_events.{m}", r["counts"][m], r["n_grid"])
        print(f"  lp tail events at n={p.n_grid}: " +
              "; ".join(f"{m} {res['lp']['counts'][m]}" for m in res["lp"]["methods"]))
        print(f"  cpu {timing['cpu_s']:.1f}s, wall {timing['wall_s']:.1f}s")


if __name__ == "__main__":
    main()
