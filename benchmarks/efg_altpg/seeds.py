"""efg_altpg seeds as an axis: the train stage's policy-gradient runs of five seeds in one batch
(a run per column, as the stage runs them: every seed, step, arm and start of a variant
together) against one seed after another (a batch per seed) and one run after another, on
calibration seeds only (>= 1000).

    nice -n 19 python -m benchmarks.efg_altpg.seeds [--seeds 1000,...] [--iterations 400] [--games kuhn_poker,leduc_poker]

For each game's grid (the default profile's steps, inits, tau and tau = 0) it times the runs in
CPU seconds in the three ways, checks that every run's exploitability curve and last policies are
the same bit for bit in all three, and prints the times and their ratio to one run after another.
Rounds are capped at ``--iterations`` (the per-round costs are what differ; the stage's rounds are
printed). ``--smoke`` runs it at tiny sizes in seconds (what CI runs): two seeds, Kuhn, 30 rounds.
"""
from __future__ import annotations

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1000,1001,1002,1003,1004")
    ap.add_argument("--iterations", type=int, default=400, help="rounds per run (capped)")
    ap.add_argument("--games", default="kuhn_poker,leduc_poker")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:  # options given explicitly still win
        ap.set_defaults(seeds="1000,1001", iterations=30, games="kuhn_poker")
        a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    if min(seeds) < 1000:
        raise SystemExit("benchmarks use calibration seeds (>= 1000) only")

    import numpy as np
    import pyspiel

    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study
    from stages.efg_altpg import algorithms as al
    from stages.efg_altpg.games import VARIANTS
    from stages.efg_altpg.params import PARAMS
    from stages.efg_altpg.seqform import build
    from stages.efg_altpg.train import rng_for

    limit_threads()
    _, p = load_study("efg_altpg", PARAMS, profile=a.profile)
    tp = p.train
    for name in a.games.split(","):
        sf = build(pyspiel.load_game(name))
        gp = getattr(tp, name)
        its = min(a.iterations, gp.iterations)
        times = {"one batch (the stage)": 0.0, "a batch per seed": 0.0, "one run after another": 0.0}
        n_runs, same = 0, True
        for variant in VARIANTS:
            # the stage's rows (stages.efg_altpg.train.grid_runs)
            rows = [(tau, eta, s, i) for tau in (gp.tau, 0.0) for eta in getattr(gp.steps, variant)
                    for s in seeds for i in range(gp.inits)]
            n_runs += len(rows)
            chunks = {"one batch (the stage)": [list(range(len(rows)))],
                      "a batch per seed": [[r for r, row in enumerate(rows) if row[2] == s] for s in seeds],
                      "one run after another": [[r] for r in range(len(rows))]}
            ref = None
            for mode, parts in chunks.items():
                got = {}
                t0 = time.process_time()
                for part in parts:
                    res = al.run_batch(sf, variant, [rows[r][0] for r in part], [rows[r][1] for r in part], its,
                                       [rng_for(rows[r][2], name, "init", rows[r][3]) for r in part],
                                       floor=tp.floor, init_scale=tp.init_scale, eval_every=gp.eval_every,
                                       average=True)
                    for j, r in enumerate(part):
                        got[r] = (res.expl[j], res.avg_expl[j], res.pis[0][:, j], res.pis[1][:, j])
                times[mode] += time.process_time() - t0
                if ref is None:
                    ref = got
                else:
                    same &= all(np.array_equal(x, y) for r in ref for x, y in zip(ref[r], got[r]))
        base = times["one run after another"]
        print(f"{name}: {n_runs} runs ({len(seeds)} seeds x 3 variants x steps x tau, 0 x {gp.inits} inits), "
              f"{its} rounds each (the stage: {gp.iterations}); every run's figures "
              + ("the same bit for bit in all three" if same else "DIFFER between the modes"), flush=True)
        for mode, t in times.items():
            print(f"  {mode}: {t:.2f} CPU s, ratio to one run after another {t / base:.3f}", flush=True)
        if not same:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
