"""ensemble_tail train: the Monte-Carlo sweep over sample sizes.

For each problem (the stochastic LP; the regression model selection when enabled) and each n
of its grid: ``replications`` independent data sets of size n, on each the base learner (SAA
on all n points), MoVE, ROVE, ROVEs (when enabled) and the bagging-average; the number of
replications whose excess risk exceeds the problem's threshold (the tail event) and the mean
excess risk of every method. Everything is vectorized over replications (in chunks) and
subsamples. The control of the musts, the tuned bagging-average (``bagged``: subsample size
``bag_fraction`` x n, ``bag_B`` subsamples, the mean of their solutions), runs on the same data.

Every verdict seed (``ctx.seeds``) is one independent repetition of the whole sweep: its own
replications. Randomness: one numpy stream per (seed, problem, n, chunk) for the data and the
vote ensembles, and its own stream (seed, problem, n, chunk, 1) for the tuned bagging, so a
seed's figures depend on that seed only. The seeds run one after another in this process
(benchmarks/ensemble_tail/seeds.py: the arrays are already batched over a chunk of replications).

Outputs: data/ensemble_tail/tails.json (counts per seed), reports/ensemble_tail/train.json (timings).
"""
from __future__ import annotations

import time

from stages.common.runtime.stage import stage

from .params import EnsembleTailParams
from .paths import TAILS, TRAIN_REPORT

PROBLEM_IDS = {"lp": 0, "regression": 1}


def sweep(problem: str, make_costs, excess, n_grid: list[int], R: int, chunk: int, ens, threshold: float,
          seed: int, bags: dict[str, float] | None = None) -> dict:
    """Tail-event counts and mean excess risk per method and n (one problem). ``bags``: name ->
    subsample fraction of the tuned bagging-average arms (default: ``bagged`` at
    ``ens.bag_fraction``; the calibration passes several, all on the same stream)."""
    import numpy as np
    from tqdm import tqdm

    from .ensemble import bag_size, bagging_tuned, run_all

    bags = {"bagged": ens.bag_fraction} if bags is None else bags
    methods = ["base", "move", "rove"] + (["roves"] if ens.roves else []) + ["bagging", *bags]
    counts = {m: [] for m in methods}
    mean_ex = {m: [] for m in methods}
    for n in tqdm(n_grid, desc=f"ensemble_tail {problem}", mininterval=2, unit="n"):
        c = {m: 0 for m in methods}
        s = {m: 0.0 for m in methods}
        for j, start in enumerate(range(0, R, chunk)):
            r = min(chunk, R - start)
            rng = np.random.default_rng([seed, PROBLEM_IDS[problem], n, j])
            costs = make_costs(rng, r, n)
            out = run_all(costs, rng, ens.k, ens.B, ens.k1, ens.k2, ens.B1, ens.B2,
                          ens.auto_epsilon_prob, ens.roves)
            for name, frac in bags.items():
                out[name] = bagging_tuned(costs, np.random.default_rng([seed, PROBLEM_IDS[problem], n, j, 1]),
                                          bag_size(n, frac, ens.k), ens.bag_B)
            for m in methods:
                e = out[m] @ excess if m == "bagging" or m in bags else excess[out[m]]
                c[m] += int((e > threshold).sum())
                s[m] += float(e.sum())
        for m in methods:
            counts[m].append(c[m])
            mean_ex[m].append(s[m] / R)
    return {"n_grid": list(n_grid), "replications": R, "threshold": threshold, "methods": methods,
            "counts": counts, "mean_excess": mean_ex,
            "bag_k": {name: [bag_size(n, f, ens.k) for n in n_grid] for name, f in bags.items()}}


def run_seed(p, seed: int) -> tuple[dict, dict]:
    """One verdict seed's sweeps (the LP; the regression when enabled) and their timings."""
    import numpy as np

    from . import problems as P

    t0, c0 = time.perf_counter(), time.process_time()
    lp = p.lp
    cvec = np.asarray(lp.costs, float)
    res = {"lp": sweep("lp", lambda rng, r, n: P.lp_costs(rng, cvec, lp.tail_index, r, n),
                       P.true_excess("lp", c=cvec), p.n_grid, p.replications, p.chunk, p.ensembles,
                       lp.threshold, seed)}
    res["lp"]["tail_index"] = lp.tail_index
    timing = {"lp_wall_s": time.perf_counter() - t0, "lp_cpu_s": time.process_time() - c0}
    rg = p.regression
    if rg.enabled:
        t1, c1 = time.perf_counter(), time.process_time()
        beta, models = P.regression_models(rg.dim, rg.sq_dists)
        res["regression"] = sweep("regression",
                                  lambda rng, r, n: P.regression_costs(rng, beta, models, rg.tail_index, r, n),
                                  P.true_excess("regression", dists=rg.sq_dists), rg.n_grid, rg.replications,
                                  p.chunk, p.ensembles, rg.threshold, seed)
        res["regression"]["tail_index"] = rg.tail_index
        timing.update(regression_wall_s=time.perf_counter() - t1, regression_cpu_s=time.process_time() - c1)
    timing.update(wall_s=time.perf_counter() - t0, cpu_s=time.process_time() - c0)
    return res, timing


def main() -> None:
    with stage("ensemble_tail", "train", EnsembleTailParams) as ctx:
        from stages.common.io import write_json
        from stages.common.seeds import run_seeds

        p = ctx.params.train
        t0, c0 = time.perf_counter(), time.process_time()
        runs = run_seeds(ctx.seeds, lambda s: run_seed(p, s), what="ensemble_tail seed")
        write_json(ctx.path(TAILS), {"seeds": list(runs), "per_seed": {str(s): r[0] for s, r in runs.items()}})
        timing = {"per_seed": {str(s): r[1] for s, r in runs.items()},
                  "wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}
        write_json(ctx.path(TRAIN_REPORT), timing)
        for s, (res, _) in runs.items():
            for prob, r in res.items():
                for m in r["methods"]:
                    ctx.run.log_curve(f"seed{s}.{prob}.tail_events.{m}", r["counts"][m], r["n_grid"])
            print(f"  seed {s}: lp tail events at n={p.n_grid}: " +
                  "; ".join(f"{m} {res['lp']['counts'][m]}" for m in res["lp"]["methods"]))
        print(f"  cpu {timing['cpu_s']:.1f}s, wall {timing['wall_s']:.1f}s ({len(runs)} seeds)")


if __name__ == "__main__":
    main()
