"""diff_purify: our PGD (stages/diff_purify/core.pgd) against the Adversarial Robustness Toolbox's
(ART, ProjectedGradientDescentPyTorch), in one run, on the study's trained classifier and test digits.

Both without a random start, so both are deterministic and should take the same sign steps: prints
the largest difference between the two adversarial batches, the accuracy under each, and the CPU
time of each (time.process_time, one torch thread) with their ratio.

    dvc repro stages/diff_purify/dvc.yaml:diff_purify-train      # the classifier it attacks
    nice -n 19 python -m benchmarks.diff_purify.pgd_art [--eps 0.1] [--steps 20]

``--smoke`` runs it at tiny sizes in seconds (what CI runs), without the stage's outputs: a classifier
trained a few steps here (core.train_classifier) attacks 50 test digits, 3 PGD steps, once.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--eps", type=float, default=0.1)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each (the best is kept)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:  # tiny sizes; options given explicitly still win
        ap.set_defaults(steps=3, repeat=1)
        a = ap.parse_args()

    import numpy as np
    import torch

    from stages.common.device import limit_threads

    limit_threads(1)
    from art.attacks.evasion import ProjectedGradientDescentPyTorch
    from art.estimators.classification import PyTorchClassifier

    from stages.diff_purify.core import load_weights, pgd, train_classifier
    from stages.diff_purify.data import load_digits_split
    from stages.diff_purify.paths import DIGITS, WEIGHTS

    if a.smoke:
        print("smoke: no trained model; a classifier trained 20 steps here stands in for the train stage's")
        xtr, ytr, xte, yte = load_digits_split(0.25, 0)
        clf, _ = train_classifier(xtr, ytr, 32, 20, 1e-3, 64, 0)
        x, y = xte[:50], yte[:50]
    else:
        for rel in (DIGITS, WEIGHTS):
            if not Path(rel).exists():
                sys.exit(f"{rel} is missing: run `dvc repro stages/diff_purify/dvc.yaml:diff_purify-train` first")
        d = np.load(DIGITS)
        nets, _ = load_weights(WEIGHTS)
        clf = nets["classifier"]
        x, y = d["x_test"], d["y_test"]
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
