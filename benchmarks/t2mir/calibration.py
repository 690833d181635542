"""t2mir calibration: steps/s of training, held-out accuracy / return of each variant, and the
shuffled-context control (where the must check fails). Run: python -m benchmarks.t2mir_calibration STEPS SEED"""
import sys
import time

import numpy as np
import torch

from stages.t2mir.icl import VARIANTS, make_pools, split_tasks
from stages.t2mir.run import action_accuracy, random_returns, rollout_returns, train_model


def main() -> None:
    torch.set_num_threads(1)
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    size, k, horizon, pool = 6, 40, 20, 200
    rng0 = np.random.default_rng(seed)
    tr, te = split_tasks(size, 0.2, rng0)
    ptr, pte = make_pools(tr, size, pool, rng0), make_pools(te, size, pool, rng0)
    cfg = dict(steps=steps, tasks_per_batch=16, contexts_per_task=4, k=k, lr=3e-3, seed=seed, d=32, heads=4,
               layers=2, n_token=6, n_task=12, top_k=2, hidden=32, balance_w=0.1, contrast_w=0.01, tau=0.1)
    rr = random_returns(size, te, 50, horizon, np.random.default_rng(1)).mean()
    print(f"size {size}, {len(tr)} train / {len(te)} held-out tasks; random return {rr:.2f}")
    for v in VARIANTS:
        t0 = time.process_time()
        m, losses = train_model(size, v, tr, ptr, **cfg)
        cpu = time.process_time() - t0
        rng = np.random.default_rng(100)
        acc = action_accuracy(m, size, te, pte, 200, k, rng)
        acc_tr = action_accuracy(m, size, tr, ptr, 50, k, rng)
        acc_sh = action_accuracy(m, size, te, pte, 200, k, rng, shuffle_context=True)
        ret = rollout_returns(m, size, te, pte, 50, k, horizon, rng)[0].mean()
        ret_sh = rollout_returns(m, size, te, pte, 50, k, horizon, rng, shuffle_context=True)[0].mean()
        print(f"{v:6s} {steps / cpu:6.1f} steps/s cpu {cpu:5.1f}s loss {np.mean(losses[-50:]):.3f} "
              f"acc held-out {acc:.3f} train {acc_tr:.3f} shuffled {acc_sh:.3f} | return {ret:.2f} shuffled {ret_sh:.2f}",
              flush=True)


if __name__ == "__main__":
    main()
