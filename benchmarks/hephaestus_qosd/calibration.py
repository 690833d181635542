"""Calibration of hephaestus_qosd: sizes, timings and the must checks at candidate sizes, with the
ablations that show each check can fail. Run: nice -n 19 python benchmarks/hephaestus_qosd/calibration.py
[N_NODES [N_TRAIN [N_TEST]]]

``--smoke`` runs it at tiny sizes in seconds (what CI runs): 10 nodes, one train and one test graph per
family, 2 local-search tries, 20 CVAE steps, 2 Refine iterations."""
from __future__ import annotations

import sys
import time
from types import SimpleNamespace as NS

import numpy as np

from stages.hephaestus_qosd import cvae, milp, qosd


def main(n_nodes=18, n_train=12, n_test=10, tau=1.5, seed=0, costs=("quadratic", "fixed_charge", "linear"),
         tries=20, steps=600, iterations=10):
    from stages.common.device import limit_threads
    limit_threads()
    rng = np.random.default_rng(seed)
    graphs = {sp: [qosd.make_instance(f"{sp}{i}", fam, n_nodes, tau, rng)
                   for i in range(n) for fam in qosd.FAMILIES] for sp, n in (("train", n_train), ("test", n_test))}
    t0 = time.process_time()
    X, C = [], []
    for g in graphs["train"]:
        for kind in costs:
            inst = g.with_kind(kind)
            fd = qosd.forge(inst)
            lab = qosd.local_search(inst, fd, tries, rng)
            X.append(lab / inst.T); C.append(cvae.edge_features(inst, fd))
    t_lab = time.process_time() - t0
    X, C = np.concatenate(X).astype(np.float32), np.concatenate(C)
    p = NS(n_components=3, latent=2, hidden=32, sigma_x=0.05, lr=3e-3, steps=steps, batch=256)
    t0 = time.process_time()
    model, losses = cvae.train_model(X, C, p, seed, progress=False)
    t_train = time.process_time() - t0
    print(f"labels: {len(X)} rows in {t_lab:.1f}s CPU; CVAE {p.steps} steps in {t_train:.1f}s CPU "
          f"({p.steps / t_train:.0f} steps/s); loss {losses[0]:.3f} -> {np.mean(losses[-50:]):.3f}")
    rp = NS(iterations=iterations, batch=8, sigma0=1.0, sigma_decay=0.9, lr=0.5)
    fp = NS(step_frac=0.05, credit=0.25)
    raw_feasible = []
    rows = []
    t_ref = t_milp = 0.0
    for g in graphs["test"]:
        for kind in costs:
            inst = g.with_kind(kind)
            gr = qosd.greedy_pathperturb(inst)
            fd = qosd.forge(inst)
            feats = cvae.edge_features(inst, fd)
            t0 = time.process_time()
            full = cvae.refine(inst, model, feats, fd, rp, fp, seed)
            t_ref += time.process_time() - t0
            morph = cvae.refine(inst, model, feats, fd, rp, fp, seed, use_policy=False)
            raw = cvae.decode_mean(model, feats) * inst.T          # Morph decoded, not repaired
            raw_feasible.append(qosd.is_feasible(inst, raw))
            t0 = time.process_time()
            ex = milp.solve_exact(inst)
            t_milp += time.process_time() - t0
            feas = all(qosd.is_feasible(inst, d) for d in (gr, fd, full["delta"], ex["delta"]))
            rows.append((kind, inst.cost(gr), inst.cost(fd), full["cost"], morph["cost"], full["first_sample_cost"], ex["cost"], feas))
    print(f"refine {t_ref:.1f}s CPU over {len(rows)} instances; MILP {t_milp:.1f}s CPU")
    for kind in costs:
        r = np.array([x[1:7] for x in rows if x[0] == kind], dtype=float)
        g, f, full, morph, first, opt = r.T
        print(f"{kind:13s} ratio vs greedy: forge {np.mean(f / g):.3f} full {np.mean(full / g):.3f} "
              f"morph-only {np.mean(morph / g):.3f} one-sample {np.mean(first / g):.3f}; "
              f"gap to opt: greedy {np.mean(g / opt - 1):.3f} forge {np.mean(f / opt - 1):.3f} "
              f"full {np.mean(full / opt - 1):.3f} ; full<=greedy on {np.mean(full <= g + 1e-9):.2f}")
    print("all feasible:", all(x[-1] for x in rows), "; Morph decoded without repair feasible on",
          f"{np.mean(raw_feasible):.2f} of instances")


if __name__ == "__main__":
    if "--smoke" in sys.argv[1:]:            # tiny sizes: checks the script still runs (CI)
        main(n_nodes=10, n_train=1, n_test=1, tries=2, steps=20, iterations=2)
    else:
        main(*[int(a) for a in sys.argv[1:4]])
