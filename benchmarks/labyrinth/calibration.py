"""labyrinth calibration: BC / DAgger train and test success at candidate sizes, and the settings in
which each must check fails (test mazes = train mazes; a tiny maze family; too little training).
Run: nice -n 19 python -m benchmarks.labyrinth.calibration [n] [n_train] [epochs] ...
(each argument one run: comma-separated key=value, e.g. n=8,n_train=60,n_test=100,epochs=80,same=1).
``--smoke`` runs it at tiny sizes in seconds (what CI runs): BC on 5x5 mazes, and DAgger with a
local view on the same train and test key-and-door mazes, 4 mazes and a few epochs each."""
from __future__ import annotations

import argparse
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


SMOKE = ["n=5,n_train=4,n_test=4,epochs=2,batch=16",
         "n=5,variant=key_door,view=1,same=1,dagger=1,n_train=4,n_test=4,epochs=3,batch=16"]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="*", help="runs, each comma-separated key=value (n=8,n_train=60,...)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    for spec in SMOKE if a.smoke else a.specs:
        kw = dict(kv.split("=") for kv in spec.split(","))
        conv = {"n": int, "n_train": int, "n_test": int, "epochs": int, "dagger": int, "seed": int,
                "view": lambda v: None if v == "None" else int(v), "same": lambda v: v == "1",
                "variant": str, "loop": float, "batch": int, "width": int, "lr": float}
        run(**{k: conv[k](v) for k, v in kw.items()})
