"""t2mir calibration: steps/s of training, held-out accuracy / return of each variant, and the
shuffled-context control (where the must check fails). Run: python -m benchmarks.t2mir.calibration STEPS SEED
``--smoke`` runs it at tiny sizes in seconds (what CI runs)."""
import argparse
import time

import numpy as np

from stages.common.device import limit_threads
from stages.t2mir.icl import VARIANTS, make_pools, split_tasks
from stages.t2mir.run import action_accuracy, random_returns, rollout_returns, train_model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("steps", nargs="?", type=int, default=300)
    ap.add_argument("seed", nargs="?", type=int, default=0)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    limit_threads(1)
    steps, seed = a.steps, a.seed
    size, k, horizon, pool = 6, 40, 20, 200
    # episodes: random, held-out accuracy, train accuracy, rollouts (per task)
    n_rand, n_acc, n_acc_tr, n_ret = 50, 200, 50, 50
    arch = dict(tasks_per_batch=16, contexts_per_task=4, d=32, heads=4, layers=2, n_token=6, n_task=12, hidden=32)
    if a.smoke:                    # the same code path at tiny sizes (figures meaningless)
        steps, size, k, horizon, pool = 3, 4, 8, 6, 20
        n_rand, n_acc, n_acc_tr, n_ret = 5, 10, 5, 3
        arch = dict(tasks_per_batch=4, contexts_per_task=2, d=16, heads=2, layers=1, n_token=4, n_task=4, hidden=8)
        print(f"smoke: {size}x{size} grid, {steps} training steps, tiny models", flush=True)
    rng0 = np.random.default_rng(seed)
    tr, te = split_tasks(size, 0.2, rng0)
    ptr, pte = make_pools(tr, size, pool, rng0), make_pools(te, size, pool, rng0)
    cfg = dict(steps=steps, k=k, lr=3e-3, seed=seed, top_k=2, balance_w=0.1, contrast_w=0.01, tau=0.1, **arch)
    rr = random_returns(size, te, n_rand, horizon, np.random.default_rng(1)).mean()
    print(f"size {size}, {len(tr)} train / {len(te)} held-out tasks; random return {rr:.2f}")
    for v in VARIANTS:
        t0 = time.process_time()
        m, losses = train_model(size, v, tr, ptr, **cfg)
        cpu = time.process_time() - t0
        rng = np.random.default_rng(100)
        acc = action_accuracy(m, size, te, pte, n_acc, k, rng)
        acc_tr = action_accuracy(m, size, tr, ptr, n_acc_tr, k, rng)
        acc_sh = action_accuracy(m, size, te, pte, n_acc, k, rng, shuffle_context=True)
        ret = rollout_returns(m, size, te, pte, n_ret, k, horizon, rng)[0].mean()
        ret_sh = rollout_returns(m, size, te, pte, n_ret, k, horizon, rng, shuffle_context=True)[0].mean()
        print(f"{v:6s} {steps / cpu:6.1f} steps/s cpu {cpu:5.1f}s loss {np.mean(losses[-50:]):.3f} "
              f"acc held-out {acc:.3f} train {acc_tr:.3f} shuffled {acc_sh:.3f} | return {ret:.2f} shuffled {ret_sh:.2f}",
              flush=True)


if __name__ == "__main__":
    main()
