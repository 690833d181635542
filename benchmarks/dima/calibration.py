"""dima calibration: steps/s of world-model training and the must check (seq vs joint rollout MSE)
at candidate sizes, with the N=1 control and the teacher-forced variant. Not a stage; prints a table.

    nice -n 19 python -m benchmarks.dima.calibration --n 2 --episodes 100 --steps 2000 --seeds 0 1 2

``--smoke`` runs it at tiny sizes in seconds (what CI runs): 3 + 2 episodes, 5 steps of a tiny model.
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[2])
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--test-episodes", type=int, default=60)
    ap.add_argument("--eps", type=float, default=0.5)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--params", type=int, default=10000)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--horizon", type=int, default=10)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--variants", nargs="+", default=["joint", "seq:chain", "seq:denoise"])
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    args = ap.parse_args()
    if args.smoke:  # tiny sizes; options given explicitly still win
        ap.set_defaults(episodes=3, test_episodes=2, steps=5, params=500, batch=16, horizon=3)
        args = ap.parse_args()
    from stages.common.device import limit_threads

    limit_threads(1)
    from stages.dima.env import collect
    from stages.dima.wm import rollout_mse, train

    for n in args.n:
        for seed in args.seeds:
            tr = collect(n, 25, args.episodes, seed, args.eps)
            te = collect(n, 25, args.test_episodes, seed + 1000, args.eps)
            res = {}
            for v in args.variants:
                kind, _, mode = v.partition(":")
                t0 = time.process_time()
                m, losses = train(kind, tr, n, args.params, args.layers, args.steps, args.batch, args.lr,
                                  args.sigma, seed, seq_training=mode or "chain")
                cpu = time.process_time() - t0
                mse = rollout_mse(m, te, args.horizon)
                res[v] = mse
                print(f"N={n} seed={seed} {v:12s} params={m.n_params():6d} h={m.hidden:4d} "
                      f"{args.steps / cpu:6.0f} steps/cpu-s  loss_end={np.mean(losses[-100:]):.4f} "
                      f"mse@1={mse[0]:.3e} mse@{args.horizon}={mse[-1]:.3e}", flush=True)
            j = res.get("joint")
            if j is not None:
                for v, m in res.items():
                    if v != "joint":
                        print(f"   ratio {v}/joint @1={m[0] / j[0]:.3f} @H={m[-1] / j[-1]:.3f}")


if __name__ == "__main__":
    main()
