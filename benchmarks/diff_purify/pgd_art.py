"""diff_purify: our PGD (stages/diff_purify/core.pgd) against the Adversarial Robustness Toolbox's
(ART, ProjectedGradientDescentPyTorch), in one run, on the study's classifier and test digits of a
calibration seed (>= 1000, never a verdict seed): the classifier is trained here with the train
stage's function and the profile's sizes (core.train_classifier, train.clf_*), on the seed's split.

Both without a random start, so both are deterministic and should take the same sign steps: prints
the largest difference between the two adversarial batches, the accuracy under each, and the CPU
time of each (time.process_time, one torch thread) with their ratio.

    nice -n 19 python -m benchmarks.diff_purify.pgd_art [--seed 1000] [--eps 0.1] [--steps 20]

``--smoke`` runs it at tiny sizes in seconds (what CI runs): a classifier trained 20 steps attacks
50 test digits, 3 PGD steps, once.
"""
from __future__ import annotations

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1000, help="a calibration seed (>= 1000)")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--eps", type=float, default=0.1)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each (the best is kept)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:  # tiny sizes; options given explicitly still win
        ap.set_defaults(steps=3, repeat=1)
        a = ap.parse_args()
    if a.seed < 1000:
        raise SystemExit("benchmarks use calibration seeds >= 1000 only (the verdict seeds are below 1000)")

    import numpy as np
    import torch

    from stages.common.device import limit_threads

    limit_threads(1)
    from art.attacks.evasion import ProjectedGradientDescentPyTorch
    from art.estimators.classification import PyTorchClassifier

    from stages.common.runtime.params import load_study
    from stages.diff_purify.core import pgd, train_classifier
    from stages.diff_purify.data import load_digits_split
    from stages.diff_purify.params import PARAMS

    _, p = load_study("diff_purify", PARAMS, profile=a.profile)
    t = p.train
    xtr, ytr, xte, yte = load_digits_split(p.prepare.test_fraction, a.seed)
    if a.smoke:
        print(f"smoke: a classifier trained 20 steps (seed {a.seed}) attacks 50 test digits")
        clf, _ = train_classifier(xtr, ytr, 32, 20, 1e-3, 64, a.seed * 1000 + 1)
        x, y = xte[:50], yte[:50]
    else:
        clf, _ = train_classifier(xtr, ytr, t.clf_hidden, t.clf_steps, t.lr, t.batch, a.seed * 1000 + 1)
        x, y = xte, yte
    for prm in clf.parameters():
        prm.requires_grad_(False)
    xt, yt = torch.as_tensor(x), torch.as_tensor(y)
    alpha = a.eps / 8

    def ours():
        return pgd(clf, xt, yt, a.eps, alpha, a.steps, random_start=False).numpy()

    est = PyTorchClassifier(model=clf, loss=torch.nn.CrossEntropyLoss(), input_shape=(64,), nb_classes=10,
                            clip_values=(0.0, 1.0))
    attack = ProjectedGradientDescentPyTorch(est, norm=np.inf, eps=a.eps, eps_step=alpha, max_iter=a.steps,
                                             num_random_init=0, batch_size=len(x), verbose=False)

    def art_pgd():
        return attack.generate(x=x, y=y)

    times = {}
    out = {}
    for name, fn in (("ours", ours), ("art", art_pgd)):
        best = float("inf")
        for _ in range(a.repeat):
            t0 = time.process_time()
            out[name] = fn()
            best = min(best, time.process_time() - t0)
        times[name] = best
    with torch.no_grad():
        acc = {k: float((clf(torch.as_tensor(v, dtype=torch.float32)).argmax(1) == yt).float().mean()) for k, v in out.items()}
    diff = np.abs(out["ours"] - out["art"])
    print(f"{len(x)} test digits, L_inf eps {a.eps}, {a.steps} steps of {alpha:g}, no random start")
    print(f"accuracy under attack: ours {acc['ours']:.4f}, ART {acc['art']:.4f}")
    print(f"adversarial batches: max |ours - ART| = {diff.max():.2e}; digits that differ by > 1e-5: "
          f"{int((diff.max(1) > 1e-5).sum())}")
    print(f"CPU s (best of {a.repeat}): ours {times['ours']:.3f}, ART {times['art']:.3f}; "
          f"ART / ours = {times['art'] / times['ours']:.2f}")


if __name__ == "__main__":
    main()
