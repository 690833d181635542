"""labyrinth calibration: BC / DAgger train and test success at candidate sizes, and the settings in
which each must check fails (test mazes = train mazes; a tiny maze family; too little training).
Run: nice -n 19 python -m benchmarks.labyrinth_calibration [n] [n_train] [epochs] ..."""
from __future__ import annotations

import sys
import time

import numpy as np
import torch

from stages.labyrinth.imitate import Task, rollout, train_bc, train_dagger
from stages.labyrinth.maze import make_splits, optimal_length


def run(n, n_train, n_test, epochs, variant="base", view=None, same=False, dagger=0, seed=0, loop=0.1,
        batch=64, width=32, lr=3e-3):
    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    t0 = time.process_time()
    if same:
        sp = make_splits(n, variant, {"train": n_train}, rng, loop)
        sp["test"] = sp["train"]
    else:
        sp = make_splits(n, variant, {"train": n_train, "test": n_test}, rng, loop)
    tr = [Task.of(m) for m in sp["train"]]
    te = [Task.of(m) for m in sp["test"]]
    t1 = time.process_time()
    ms = 4 * n * n
    if dagger:
        net, info = train_dagger(tr, view, epochs, lr, batch, seed, dagger, max(epochs // 3, 1), ms, width)
    else:
        net, info = train_bc(tr, view, epochs, lr, batch, seed, width)
    t2 = time.process_time()
    s_tr = rollout(net, tr, view, ms)[0].mean()
    s_te = rollout(net, te, view, ms)[0].mean()
    t3 = time.process_time()
    print(f"n={n} var={variant} view={view} same={same} dagger={dagger} ntr={n_train} ep={epochs} "
          f"samples={info['n_samples']} opt_len={np.mean([optimal_length(m) for m in sp['test']]):.1f} "
          f"train={s_tr:.2f} test={s_te:.2f} | cpu gen={t1-t0:.1f}s fit={t2-t1:.1f}s eval={t3-t2:.1f}s "
          f"b={batch} w={width} lr={lr} loss={info['loss'][-1]:.3f}", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    for spec in args:
        kw = dict(kv.split("=") for kv in spec.split(","))
        conv = {"n": int, "n_train": int, "n_test": int, "epochs": int, "dagger": int, "seed": int,
                "view": lambda v: None if v == "None" else int(v), "same": lambda v: v == "1",
                "variant": str, "loop": float, "batch": int, "width": int, "lr": float}
        run(**{k: conv[k](v) for k, v in kw.items()})
