"""autosep calibration (the prototype written before the stages): every method and the three
controls on the four digit groups, for a few seeds; prints the must checks' figures and CPU times.
It keeps its own copy of the split (the stages use stages/autosep/data.py), so its figures are the
README's "Calibration" ones, not the stages'.

    nice -n 19 python -m benchmarks.autosep.calibration --seeds 0 1 2                        # noise 0.6, 5 repeats
    nice -n 19 python -m benchmarks.autosep.calibration --seeds 0 1 2 --compare-noise 0.3    # the draft's noise
    nice -n 19 python -m benchmarks.autosep.calibration --seeds 0 1 2 --label-edit pair

``--smoke`` runs it at tiny sizes in seconds (what CI runs): seed 0, one repeat.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_digits

from stages.autosep.experiment import UNSUPERVISED, Search, evaluate_group, generic_prompt, search_group
from stages.autosep.sim import GROUPS, Blackbox, prototypes


def split(y, seed, pretrain_frac=0.3, n_unl=30, rep=0):
    rng = np.random.default_rng([seed, 0])
    pre, unl, test = [], {}, {}
    idx_by_class = {c: rng.permutation(np.flatnonzero(y == c)) for c in range(10)}
    rest = {}
    rng_rep = np.random.default_rng([seed, 1, rep])
    for c, idx in idx_by_class.items():
        k = int(round(pretrain_frac * len(idx)))
        pre.append(idx[:k])
        rest[c] = rng_rep.permutation(idx[k:])
    for g, classes in enumerate(GROUPS):
        unl[g] = np.concatenate([rest[c][:n_unl] for c in classes])
        test[g] = np.concatenate([rest[c][n_unl:] for c in classes])
    return np.concatenate(pre), unl, test


def run(seed, block=4, compare_noise=0.3, label_edit="prototype", generic_rule="ink", methods=None, s=None, repeats=1):
    d = load_digits()
    x, y = d.data / 16.0, d.target
    out = []
    for rep in range(repeats):
        out += run_rep(x, y, seed, rep, block, compare_noise, label_edit, generic_rule, methods, s)
    acc = {k: float(np.mean([o["accuracy"][k] for o in out])) for k in out[0]["accuracy"]}
    acc["rho"] = float(np.mean([o["rho"] for o in out]))
    return acc


def run_rep(x, y, seed, rep, block, compare_noise, label_edit, generic_rule, methods, s):
    pre, unl, test = split(y, seed, rep=rep)
    bb = Blackbox(prototypes(x[pre], y[pre]), block=block, compare_noise=compare_noise)
    s = s or Search(label_edit=label_edit)
    gen = generic_prompt(x[pre], s.m, generic_rule)
    out = []
    for g, classes in enumerate(GROUPS):
        kw = {} if methods is None else {"methods": methods}
        sr = search_group(bb, x[unl[g]], y[unl[g]], classes, gen, s, seed * 1000 + rep * 10 + g, **kw)
        ev = evaluate_group(bb, x[unl[g]], x[test[g]], y[test[g]], classes, sr["prompts"], gen, s, seed * 1000 + rep * 10 + g)
        out.append(ev)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--label-edit", default="prototype")
    ap.add_argument("--compare-noise", type=float, default=0.6)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--blind-noise", type=float, default=20.0)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    args = ap.parse_args()
    if args.smoke:
        args.seeds, args.repeats = [0], 1
    cn, rep = args.compare_noise, args.repeats
    for seed in args.seeds:
        t = time.process_time()
        a = run(seed, compare_noise=cn, label_edit=args.label_edit, repeats=rep)
        t_main = time.process_time() - t
        best = max(UNSUPERVISED, key=lambda k: a[k])
        print(f"seed {seed} ({t_main:.1f} CPU s): " + " ".join(f"{k} {v:.3f}" for k, v in a.items()))
        print(f"  autosep-zs {100*(a['autosep']-a['zero_shot']):+.1f} pp, -generic {100*(a['autosep']-a['generic']):+.1f}, "
              f"-random_score {100*(a['autosep']-a['random_score']):+.1f}, -best({best}) {100*(a['autosep']-a[best]):+.1f}, "
              f"-true {100*(a['autosep']-a['true_label']):+.1f}, rho {a['rho']:.2f}")
        t = time.process_time()
        f = run(seed, block=2, compare_noise=cn, repeats=rep, methods=("autosep",))
        print(f"  control finer look (block 2): autosep-zs {100*(f['autosep']-f['zero_shot']):+.1f} pp, rho {f['rho']:.2f} "
              f"({time.process_time()-t:.1f} CPU s)")
        v = run(seed, compare_noise=cn, generic_rule="variance", repeats=rep, methods=("autosep",))
        print(f"  control strong generic (variance): autosep-generic {100*(v['autosep']-v['generic']):+.1f} pp")
        n = run(seed, compare_noise=args.blind_noise, repeats=rep, methods=("autosep", "random_score"))
        print(f"  control blind score (noise {args.blind_noise}): autosep-random_score "
              f"{100*(n['autosep']-n['random_score']):+.1f} pp, rho {n['rho']:.2f}")


if __name__ == "__main__":
    main()
