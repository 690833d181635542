"""Calibration of the coral_diffusion study: steps per CPU second of the DDPM training loop, then the
two must checks (tail-head latent overlap, tail classifier accuracy) at a given size, with and without
CORAL, on the long-tailed data and the balanced control. Prints CPU seconds (process time).

    nice -n 19 python benchmarks/coral_diffusion/calibration.py --steps 1500 --seeds 0 1 2

``--smoke`` runs it at tiny sizes in seconds (what CI runs): a few steps of a tiny DDPM, one seed.
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--bottleneck", type=int, default=32)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--T", type=int, default=100)
    ap.add_argument("--sample-steps", type=int, default=25)
    ap.add_argument("--n-max", type=int, default=140)
    ap.add_argument("--ratio", type=float, default=20.0)
    ap.add_argument("--weights", type=float, nargs="+", default=[0.5])
    ap.add_argument("--time-scale", type=float, default=0.3)
    ap.add_argument("--temp", type=float, default=0.1)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--per-class", type=int, default=100)
    ap.add_argument("--label-init", type=float, default=0.02)
    ap.add_argument("--class-in-encoder", type=int, default=1)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--no-control", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:  # tiny sizes; options given explicitly still win
        ap.set_defaults(steps=5, hidden=16, bottleneck=8, batch=16, T=10, sample_steps=2, per_class=3)
        a = ap.parse_args()

    from stages.common.device import limit_threads

    limit_threads(1)
    from stages.coral_diffusion import ddpm, digits
    from stages.common.samples import mean_pairwise_distance
    from stages.coral_diffusion.measures import knn_overlap, pair_overlap

    x, y = digits.load()
    head, tail = [0, 1, 2], [7, 8, 9]
    for seed in a.seeds:
        d = digits.split(x, y, 30, a.n_max, a.ratio, seed)
        clf = digits.fit_classifier(d["pool_x"], d["pool_y"], 64, seed)
        print(f"seed {seed}: counts {d['counts'].tolist()}; classifier test acc {clf.score(d['test_x'], d['test_y']):.3f}")
        sets = [("lt", d["lt_x"], d["lt_y"])] + ([] if a.no_control else [("bal", d["bal_x"], d["bal_y"])])
        for name, tx, ty in sets:
            for w in [0.0] + a.weights:
                t0 = time.process_time()
                model, dl, cl = ddpm.train_ddpm(tx, ty, T=a.T, hidden=a.hidden, bottleneck=a.bottleneck, proj=32, label_init=a.label_init, class_in_encoder=bool(a.class_in_encoder),
                                                steps=a.steps, batch=a.batch, lr=a.lr, coral_weight=w,
                                                temperature=a.temp, time_scale=a.time_scale, seed=seed)
                tt = time.process_time() - t0
                t0 = time.process_time()
                labels = np.repeat(np.arange(10), a.per_class)
                gen = ddpm.sample(model, labels, T=a.T, sample_steps=a.sample_steps, seed=seed + 100)
                ts = time.process_time() - t0
                pred = clf.predict(gen)
                acc = {c: float((pred[labels == c] == c).mean()) for c in range(10)}
                f = ddpm.bottleneck_features(model, d["test_x"], d["test_y"], [0.1, 0.3, 0.5, 0.7, 0.9], T=a.T, seed=seed)
                ovs = [knn_overlap(fi, d["test_y"], tail, head, 10) for fi in f]
                ov = np.mean(ovs)
                bcs = [pair_overlap(fi, d["test_y"], tail, head) for fi in f]
                div = np.mean([mean_pairwise_distance(gen[labels == c]) for c in tail])
                print(f"  {name} w={w}: train {tt:.1f} cpu-s ({a.steps / tt:.0f} steps/s), sample {ts:.1f} s; "
                      f"loss {np.mean(dl[-100:]):.4f}; overlap {ov:.3f} {np.round(ovs, 3).tolist()} BC {np.mean(bcs):.4f} {np.round(bcs, 4).tolist()}; tail acc {np.mean([acc[c] for c in tail]):.3f} "
                      f"head acc {np.mean([acc[c] for c in head]):.3f}; tail div {div:.2f}; "
                      f"per-class acc {[round(acc[c], 2) for c in range(10)]}", flush=True)


if __name__ == "__main__":
    main()
