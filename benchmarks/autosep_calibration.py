"""autosep calibration: every method and the ablations on the four digit groups, for a few seeds,
at the default sizes; prints the must checks' figures and their CPU time.

    nice -n 19 python benchmarks/autosep_calibration.py --seeds 0 1 2
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
    args = ap.parse_args()
    for seed in args.seeds:
        t = time.process_time()
        a = run(seed, label_edit=args.label_edit)
        t_main = time.process_time() - t
        best = max(UNSUPERVISED, key=lambda k: a[k])
        print(f"seed {seed} ({t_main:.1f} CPU s): " + " ".join(f"{k} {v:.3f}" for k, v in a.items() if isinstance(v, float)))
        print(f"  autosep-zs {100*(a['autosep']-a['zero_shot']):+.1f} pp, -generic {100*(a['autosep']-a['generic']):+.1f}, "
              f"-random_score {100*(a['autosep']-a['random_score']):+.1f}, -best({best}) {100*(a['autosep']-a[best]):+.1f}, "
              f"-true {100*(a['autosep']-a['true_label']):+.1f}, rho {a['rho']:.2f}")
        t = time.process_time()
        f = run(seed, block=2, methods=("autosep",))
        print(f"  finer look (block 2): autosep-zs {100*(f['autosep']-f['zero_shot']):+.1f} pp, -generic "
              f"{100*(f['autosep']-f['generic']):+.1f}, rho {f['rho']:.2f} ({time.process_time()-t:.1f} CPU s)")
        t = time.process_time()
        n = run(seed, compare_noise=3.0, methods=("autosep", "random_score"))
        print(f"  noisy comparisons (3.0): autosep-random_score {100*(n['autosep']-n['random_score']):+.1f} pp, "
              f"autosep-zs {100*(n['autosep']-n['zero_shot']):+.1f}, -generic {100*(n['autosep']-n['generic']):+.1f}, "
              f"rho {n['rho']:.2f} ({time.process_time()-t:.1f} CPU s)")


if __name__ == "__main__":
    main()
