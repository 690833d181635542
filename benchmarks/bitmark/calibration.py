"""bitmark calibration: steps per CPU second of the AR model, and each must check at the default
sizes, with the settings where it fails (a small delta for the AUC; the clean-trained control for
radioactivity).

    python -m benchmarks.bitmark.calibration [--ngram 2] [--hidden 256] [--steps 1500] [--radio-n 4000] ...

Defaults are the default profile's sizes (n = 2); ``--ngram 4`` was our first design. The AUC check
fails at the small deltas of the sweep (0.25, 0.5); the radioactivity check fails for the control.

``--smoke`` runs it at tiny sizes in seconds (what CI runs).
"""
from __future__ import annotations

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--wd", type=float, default=1e-5)
    ap.add_argument("--ngram", type=int, default=2)
    ap.add_argument("--key", type=int, default=20250)
    ap.add_argument("--deltas", type=float, nargs="+", default=[0.25, 0.5, 1.0, 2.0])
    ap.add_argument("--delta", type=float, default=2.0)
    ap.add_argument("--n-eval", type=int, default=400)
    ap.add_argument("--radio-n", type=int, default=4000)
    ap.add_argument("--radio-steps", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.hidden, a.steps, a.batch, a.n_eval, a.radio_n, a.radio_steps = 16, 3, 16, 40, 40, 3
        a.deltas, a.delta = [a.delta], a.delta

    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    from stages.bitmark import ar, quality, wm
    from stages.common.device import limit_threads
    from stages.common.samples import frechet_from_features

    limit_threads(1)
    d = load_digits()
    q = wm.quantise(d.data)
    xtr, xte, ytr, yte = train_test_split(q, d.target, test_size=0.2, random_state=a.seed, stratify=d.target)
    btr, bte = wm.encode(xtr), wm.encode(xte)
    table = wm.green_table(a.key, a.ngram)

    m = ar.build(a.hidden, a.layers, a.seed)
    t0 = time.process_time()
    losses = ar.train(m, btr, ytr, a.steps, a.batch, a.lr, a.wd, a.seed)
    tr_s = time.process_time() - t0
    print(f"AR train: {a.steps} steps in {tr_s:.1f} CPU s = {a.steps / tr_s:.0f} steps/s; loss {losses[0]:.3f} -> "
          f"{np.mean(losses[-50:]):.3f}; NLL bits/image train {ar.nll_bits(m, btr, ytr):.1f} test {ar.nll_bits(m, bte, yte):.1f}")

    clf = quality.fit_classifier(xtr, ytr, 32, a.seed)
    print(f"classifier test acc {quality.classify(clf, xte, yte)['accuracy']:.3f}")
    f_real = quality.features(clf, xte)
    labels = np.arange(a.n_eval) % 10
    t0 = time.process_time()
    clean = ar.sample(m, labels, a.seed + 100)
    s_s = time.process_time() - t0
    print(f"sampling {a.n_eval}: {s_s:.1f} CPU s")
    z0 = wm.z_scores(clean, table, a.ngram)
    zreal = wm.z_scores(bte, table, a.ngram)
    print(f"clean samples z mean {z0.mean():.2f} sd {z0.std():.2f}; real test z mean {zreal.mean():.2f} sd {zreal.std():.2f}")

    def qual(bits, lab):
        px = wm.decode(bits)
        c = quality.classify(clf, px, lab)
        return (f"acc {c['accuracy']:.3f} conf {c['confidence']:.3f} div {quality.diversity(px, lab):.3f} "
                f"FD {frechet_from_features(f_real, quality.features(clf, px)):.2f}")

    print(f"real test: div {quality.diversity(xte, yte):.3f}; clean model: {qual(clean, labels)}")
    wms = {}
    for dl in a.deltas:
        t0 = time.process_time()
        b = ar.sample(m, labels, a.seed + 200, table, a.ngram, dl)
        wms[dl] = b
        z = wm.z_scores(b, table, a.ngram)
        print(f"delta {dl}: z mean {z.mean():.2f} min {z.min():.2f}; AUC {wm.auc(z, z0):.4f} "
              f"TPR@1% {wm.tpr_at_fpr(z, z0, 0.01):.3f}; {qual(b, labels)} ({time.process_time() - t0:.1f} s)")
    b = wms[a.delta]
    z = wm.z_scores(b, table, a.ngram)
    rng = np.random.default_rng(0)
    for kind, ss in (("bitflip", [0.02, 0.05, 0.1, 0.2]), ("noise", [0.5, 1, 2, 3]), ("blur", [0.3, 0.5, 0.7, 1.0])):
        row = []
        for s in ss:
            za = wm.z_scores(wm.attack(b, kind, s, rng), table, a.ngram)
            zc = wm.z_scores(wm.attack(clean, kind, s, rng), table, a.ngram)
            row.append(f"{s}: {wm.auc(za, zc):.3f}")
        print(f"  robustness {kind}: " + ", ".join(row))

    # radioactivity
    rl = np.arange(a.radio_n) % 10
    t0 = time.process_time()
    wtrain = ar.sample(m, rl, a.seed + 300, table, a.ngram, a.delta)
    ctrain = ar.sample(m, rl, a.seed + 301)
    print(f"radio training sets: {time.process_time() - t0:.1f} s; their z mean: wm {wm.z_scores(wtrain, table, a.ngram).mean():.2f} "
          f"clean {wm.z_scores(ctrain, table, a.ngram).mean():.2f}")
    for name, data in (("radioactive", wtrain), ("control", ctrain)):
        m2 = ar.build(a.hidden, a.layers, a.seed + 1)
        t0 = time.process_time()
        ar.train(m2, data, rl, a.radio_steps, a.batch, a.lr, a.wd, a.seed + 1, desc=name)
        out = ar.sample(m2, labels, a.seed + 400)
        z2 = wm.z_scores(out, table, a.ngram)
        pooled = wm.z_score(wm.green_counts(out, table, a.ngram).sum(), out.size)
        print(f"{name}: z mean {z2.mean():.2f} sd {z2.std():.2f} frac>4 {np.mean(z2 > 4):.2f} pooled {pooled:.1f}; "
              f"AUC vs clean {wm.auc(z2, z0):.3f}; {qual(out, labels)} ({time.process_time() - t0:.1f} s)")


if __name__ == "__main__":
    main()
