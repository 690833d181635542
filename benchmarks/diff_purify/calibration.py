"""diff_purify calibration: training speed, then the must checks at a given size, and the settings
where they fail (a perturbation score trained on random sign noise; too strong a purification).

    nice -n 19 python -m benchmarks.diff_purify.calibration [--eps 0.15] [--n-attack 200]
Prints CPU seconds (time.process_time) per part. One torch thread.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): a few training steps, one eps, 20 digits,
every defence (--strong's too).
"""
from __future__ import annotations

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eps", type=float, nargs="+", default=[0.05, 0.1, 0.15])
    ap.add_argument("--n-attack", type=int, default=1000)
    ap.add_argument("--clf-steps", type=int, default=1500)
    ap.add_argument("--score-steps", type=int, default=3000)
    ap.add_argument("--pur-steps", type=int, default=10)
    ap.add_argument("--sigma-max", type=float, default=0.5)
    ap.add_argument("--sigma-min", type=float, default=0.05)
    ap.add_argument("--eta", type=float, default=0.3)
    ap.add_argument("--lam", type=float, default=1.0)
    ap.add_argument("--pert-sigma", type=float, default=0.05)
    ap.add_argument("--attack-steps", type=int, default=20)
    ap.add_argument("--eot", type=int, default=4)
    ap.add_argument("--strong", action="store_true", help="also the too-strong purification")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:  # tiny sizes; options given explicitly still win
        ap.set_defaults(eps=[0.1], n_attack=20, clf_steps=5, score_steps=5, pur_steps=2, attack_steps=2, eot=1,
                        strong=True)
        a = ap.parse_args()

    import numpy as np
    import torch

    from stages.common.device import limit_threads

    limit_threads(1)
    from stages.diff_purify import core
    from stages.diff_purify.data import load_digits_split

    xtr, ytr, xte, yte = load_digits_split(0.25, a.seed)
    t0 = time.process_time()
    clf, _ = core.train_classifier(xtr, ytr, 128, a.clf_steps, 1e-3, 128, a.seed)
    t_clf = time.process_time() - t0
    print(f"classifier: {a.clf_steps} steps in {t_clf:.1f} s CPU ({a.clf_steps / t_clf:.0f} steps/s)")
    t0 = time.process_time()
    prior, pl = core.train_score(xtr, 256, a.score_steps, 1e-3, 128, 0.02, 1.0, a.seed + 1)
    t_pr = time.process_time() - t0
    print(f"prior: {a.score_steps} steps in {t_pr:.1f} s CPU ({a.score_steps / t_pr:.0f} steps/s), loss {np.mean(pl[-100:]):.3f}")
    xt, yt = torch.as_tensor(xtr), torch.as_tensor(ytr)
    g = torch.Generator().manual_seed(a.seed)
    # adversarial perturbations of the training set, at each eps, plus zeros (clean)
    t0 = time.process_time()
    deltas = [torch.zeros_like(xt)]
    for e in a.eps:
        xa = core.pgd(clf, xt, yt, e, e / 4, 10, g)
        deltas.append(xa - xt)
    deltas = torch.cat(deltas).numpy()
    rand = [np.zeros_like(xtr)] + [e * np.sign(np.random.default_rng(a.seed).uniform(-1, 1, xtr.shape)).astype(np.float32) for e in a.eps]
    rand = np.concatenate(rand)
    print(f"train PGD: {time.process_time() - t0:.1f} s CPU")
    t0 = time.process_time()
    pert, ql = core.train_score(deltas, 256, a.score_steps, 1e-3, 128, 0.01, 0.5, a.seed + 2)
    pert_r, _ = core.train_score(rand, 256, a.score_steps, 1e-3, 128, 0.01, 0.5, a.seed + 2)
    print(f"pert scores: {time.process_time() - t0:.1f} s CPU, loss {np.mean(ql[-100:]):.3f}")

    xe, ye = torch.as_tensor(xte[:a.n_attack]), torch.as_tensor(yte[:a.n_attack])

    def make(pnet, lam, smax=a.sigma_max, steps=a.pur_steps, eta=a.eta):
        return lambda x: core.purify(x, prior, pnet, steps, smax, a.sigma_min, eta, lam, a.pert_sigma, g)

    defences = {"none": lambda x: x, "prior": make(None, 0.0), "aaopt": make(pert, a.lam),
                "aaopt_random_noise": make(pert_r, a.lam)}
    defences["aaopt_lam8"] = make(pert, 8.0)
    if a.strong:
        defences["prior_strong"] = make(None, 0.0, smax=2.0, steps=30, eta=0.5)
    for name, pur in defences.items():
        t0 = time.process_time()
        clean = float((core.defended_logits(clf, pur, xe, 4).argmax(1) == ye).float().mean())
        row = f"{name:20s} clean {clean:.3f}"
        for e in a.eps:
            xa = core.pgd(clf, xe, ye, e, e / 4, 20, g)
            tr = float((core.defended_logits(clf, pur, xa, 4).argmax(1) == ye).float().mean())
            _, fooled = core.bpda_eot(clf, pur, xe, ye, e, e / 8, a.attack_steps, a.eot, g, check_every=5,
                                      defence_reps=4)
            row += f" | eps {e}: pgd {tr:.3f} bpda {1 - float(fooled.float().mean()):.3f}"
        print(row + f"  ({time.process_time() - t0:.1f} s CPU)", flush=True)


if __name__ == "__main__":
    main()
