"""bitmark calibration, on calibration seeds only (>= 1000, never a verdict seed): the settings the
claims contract v2 left open, each chosen by a rule fixed before it ran, and the claims' figures
on the calibration seeds at the chosen settings.

    nice -n 19 python -m benchmarks.bitmark.calibration finetune   # the fine-tune's schedule
    nice -n 19 python -m benchmarks.bitmark.calibration token      # the token baseline's matched delta
    nice -n 19 python -m benchmarks.bitmark.calibration check      # every claim, at the profile's settings
    ... [--seeds 1000,1001,...] [--profile default] [--set train.finetune_steps=300 ...]

``finetune``: the radioactive model is the clean model fine-tuned on a mix of BitMark samples and
real digits (stages/bitmark/train.py). For each learning rate and step count of the grid it prints
the fine-tuned model's NLL on held-out data of its own fine-tuning distribution (fresh BitMark
samples and the seed's test digits, weighted by the mix's shares), the rule's figure: the grid
point with the lowest mean over the seeds is the schedule. The radioactivity figures (share of the
outputs flagged at the FPR, mean z) are printed beside it, not used to choose.
``token``: the token-level baseline (KGW on whole pixels) at each delta of the grid: its quality
cost (classifier accuracy drop against the clean model's samples) beside BitMark's at
watermark.delta, and its AUC under noise of sd 1. The rule: the delta whose mean accuracy drop is
closest to BitMark's is ``evaluate.token_delta_matched`` (the two watermarks at equal quality cost).
``check``: the study's own train_seed and evaluate_seed on each seed, then every claim of
claims.yaml judged on these seeds by its rule and control (stages/common/claims.evaluate).
Without a mode it runs all three in turn. ``--smoke`` runs it at tiny sizes in seconds (what CI runs):
the smoke profile, two seeds, short grids.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402


def _setup(a):
    import numpy as np

    from stages.bitmark.params import PARAMS
    from stages.bitmark.prepare import shipped_digits, stratified_split
    from stages.bitmark.wm import quantise
    from stages.common.device import limit_threads
    from stages.common.seeds import rng

    from benchmarks.common.calibration import study_params

    limit_threads(1)
    p = study_params("bitmark", PARAMS, a)
    x, y = shipped_digits()
    q = quantise(x)

    def split(seed: int):
        tr, te = stratified_split(y, p.prepare.test_fraction, rng(seed, 0))
        return q[tr].astype(np.int64), y[tr], q[te].astype(np.int64), y[te]

    return p, split


def finetune(a, seeds) -> None:
    import numpy as np

    from stages.bitmark import ar, wm
    from stages.bitmark.train import finetune as run_finetune
    from stages.bitmark.train import finetune_sets

    p, split = _setup(a)
    tp, w, ep = p.train, p.watermark, p.evaluate
    lrs = [float(v) for v in a.lrs.split(",")]
    steps = [int(v) for v in a.steps.split(",")]
    table = wm.green_table(w.key, w.ngram)
    share = tp.finetune_wm / (tp.finetune_wm + tp.finetune_real)
    rows = {}                                     # (lr, steps) -> list over seeds of (nll, tpr, z)
    t0 = time.process_time()
    for seed in seeds:
        xtr, ytr, xte, yte = split(seed)
        clean = ar.build(tp.hidden, tp.layers, seed)
        ar.train(clean, wm.encode(xtr), ytr, tp.steps, tp.batch, tp.lr, tp.weight_decay, seed, progress=False)
        sets = finetune_sets(clean, xtr, ytr, tp, w, seed, table, progress=False)
        labels = np.arange(ep.n_samples) % 10
        held = ar.sample(clean, labels, seed * 1000 + 91, table, w.ngram, w.delta)      # fresh BitMark samples
        z_clean = wm.z_scores(ar.sample(clean, labels, seed * 1000 + 21), table, w.ngram)
        bte = wm.encode(xte)
        for lr in lrs:
            for n in steps:
                q = tp.model_copy(update={"finetune_lr": lr, "finetune_steps": n})
                m, _ = run_finetune(clean, *sets["radioactive"], q, seed, progress=False)
                nll = share * ar.nll_bits(m, held, labels) + (1 - share) * ar.nll_bits(m, bte, yte)
                z = wm.z_scores(ar.sample(m, labels, seed * 1000 + 41), table, w.ngram)
                rows.setdefault((lr, n), []).append((nll, wm.tpr_at_fpr(z, z_clean, ep.fpr), float(z.mean())))
        print(f"  seed {seed} done, {time.process_time() - t0:.0f} CPU s so far", flush=True)
    print(f"\nprofile {a.profile}: fine-tuning set {tp.finetune_wm} BitMark samples (delta {w.delta:g}) + "
          f"{tp.finetune_real} real digits (share {share:.2f}), batch {tp.batch}; calibration seeds {seeds}")
    print("lr       steps  held-out NLL (bits, mix-weighted)  | radioactive: flagged at FPR, mean z (not the rule)")
    best = min(rows, key=lambda k: np.mean([r[0] for r in rows[k]]))
    for (lr, n), v in rows.items():
        v = np.asarray(v)
        print(f"{lr:<8g} {n:5d}  {v[:, 0].mean():7.2f} (per seed {', '.join(f'{x:.1f}' for x in v[:, 0])})"
              f"  | {v[:, 1].mean():.3f}, {v[:, 2].mean():.2f}{'   <- lowest NLL' if (lr, n) == best else ''}")
    print(f"rule (lowest mean held-out NLL): finetune_lr {best[0]:g}, finetune_steps {best[1]}")


def token(a, seeds) -> None:
    import numpy as np

    from stages.bitmark import ar, quality, wm

    p, split = _setup(a)
    tp, w, ep = p.train, p.watermark, p.evaluate
    deltas = [float(v) for v in a.token_deltas.split(",")]
    table, ttable = wm.green_table(w.key, w.ngram), wm.token_green_table(w.key)
    drops, aucs, bit_drop, bit_auc = {d: [] for d in deltas}, {d: [] for d in deltas}, [], []
    t0 = time.process_time()
    for seed in seeds:
        xtr, ytr, xte, yte = split(seed)
        clean_m = ar.build(tp.hidden, tp.layers, seed)
        ar.train(clean_m, wm.encode(xtr), ytr, tp.steps, tp.batch, tp.lr, tp.weight_decay, seed, progress=False)
        clf = quality.fit_classifier(xtr, ytr, ep.classifier_hidden, seed, ep.classifier_iters)
        labels = np.arange(ep.n_samples) % 10
        clean = ar.sample(clean_m, labels, seed * 1000 + 21)
        acc0 = quality.classify(clf, wm.decode(clean), labels)["accuracy"]
        rng = np.random.default_rng([seed, 99])
        noisy_clean = wm.attack(clean, "noise", 1.0, rng)
        marked = ar.sample(clean_m, labels, seed * 1000 + 33, table, w.ngram, w.delta)
        bit_drop.append(acc0 - quality.classify(clf, wm.decode(marked), labels)["accuracy"])
        bit_auc.append(wm.auc(wm.z_scores(wm.attack(marked, "noise", 1.0, rng), table, w.ngram),
                              wm.z_scores(noisy_clean, table, w.ngram)))
        tc = wm.token_z_scores(wm.decode(noisy_clean), ttable)
        for d in deltas:
            px = ar.sample_tokens(clean_m, labels, seed * 1000 + 36, ttable, d)
            drops[d].append(acc0 - quality.classify(clf, px, labels)["accuracy"])
            ta = wm.token_z_scores(wm.decode(wm.attack(wm.encode(px), "noise", 1.0, rng)), ttable)
            aucs[d].append(wm.auc(ta, tc))
        print(f"  seed {seed} done, {time.process_time() - t0:.0f} CPU s so far", flush=True)
    target = float(np.mean(bit_drop))
    print(f"\nprofile {a.profile}: BitMark at delta {w.delta:g}: accuracy drop {target:.3f} (per seed "
          f"{', '.join(f'{x:.3f}' for x in bit_drop)}), AUC under noise sd 1 {np.mean(bit_auc):.3f}; seeds {seeds}")
    best = min(deltas, key=lambda d: abs(np.mean(drops[d]) - target))
    for d in deltas:
        print(f"  token KGW delta {d:g}: accuracy drop {np.mean(drops[d]):.3f} (per seed "
              f"{', '.join(f'{x:.3f}' for x in drops[d])}); AUC under noise sd 1 {np.mean(aucs[d]):.3f}"
              f"{'   <- closest drop' if d == best else ''}")
    print(f"rule (accuracy drop closest to BitMark's): token_delta_matched {best:g}")


def check(a, seeds) -> None:
    import numpy as np

    from stages.bitmark.evaluate import evaluate_seed
    from stages.bitmark.train import train_seed
    from stages.common.claims import evaluate, load_claims
    from stages.common.seeds import per_seed_metrics

    from pathlib import Path

    p, split = _setup(a)
    res, t0 = {}, time.process_time()
    for seed in seeds:
        s = split(seed)
        r = train_seed(seed, *s, p.train, p.watermark, progress=False)
        res[seed] = {**evaluate_seed(seed, s, r["models"], p.evaluate, p.watermark, progress=False)["metrics"],
                     "train": r["metrics"]}
        print(f"  seed {seed} done, {time.process_time() - t0:.0f} CPU s so far", flush=True)
    metrics = per_seed_metrics(res)
    print(f"\nprofile {a.profile}, calibration seeds {seeds}: every claim as the ledger would judge it")
    for r in evaluate(load_claims(Path(__file__).resolve().parents[2] / "stages/bitmark/claims.yaml"), metrics, seeds):
        if r["verdict"] == "retired":
            continue
        ctl = r["control"]
        per = ", ".join(f"{v:.3f}" for v in r["per_seed"].values()) if r["per_seed"] else ""
        print(f"  {r['level']:6s} {r['id']:34s} {r['verdict']:12s} mean {r['mean']:.4f} [{per}]"
              + (f"; control {ctl['metric']} {ctl['verdict']} mean {ctl['mean']:.4f}" if ctl else ""))
    m = metrics
    print(f"  context: clean z {m['clean']['z_mean']:.2f}; fine-tuning sets z {m['train']['radioactive']['finetune_set_z_mean']:.2f}"
          f" / {m['train']['control']['finetune_set_z_mean']:.2f}; radioactive z {m['radioactive']['z_mean']:.2f}, "
          f"control z {m['control']['z_mean']:.2f}; wrong-key AUC {m['detection']['auc_wrong_key']:.3f}; "
          f"token matched accuracy drop {m['token_matched']['accuracy_drop']:.3f} vs BitMark "
          f"{m['quality']['accuracy_drop']:.3f}; noise-1 AUC BitMark {m['robustness']['noise_1']['auc']:.3f}, "
          f"tokens {m['robustness_token']['noise_1']['auc']:.3f} / matched {m['robustness_token_matched']['noise_1']['auc']:.3f}")
    print(f"total {time.process_time() - t0:.0f} CPU s ({np.round((time.process_time() - t0) / len(seeds), 1)} a seed)")


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("mode", nargs="?", default="all", choices=["finetune", "token", "check", "all"],
                    help="which calibration to run (default: all three in turn)")
    ap.add_argument("--lrs", default="0.0002,0.002", help="finetune: learning rates of the grid")
    ap.add_argument("--steps", default="100,300,1000,3000", help="finetune: step counts of the grid")
    ap.add_argument("--token-deltas", default="2,3,4,6", help="token: deltas of the grid")
    a, seeds = parse_seeds(ap, steps="20,60", token_deltas="2,4")
    modes = {"finetune": finetune, "token": token, "check": check}
    for name in (modes if a.mode == "all" else [a.mode]):
        modes[name](a, seeds)


if __name__ == "__main__":
    main()
