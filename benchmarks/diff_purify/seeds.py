"""diff_purify seeds as an axis: the train stage's networks of several seeds trained as batched
models (the stage's way, train.train_seeds: the classifiers of all seeds as one model with a
leading model dimension, then every seed's score prior, perturbation score and random-noise score
as one, stages.common.seeds.stack_modules / call_stacked) against one network after another
(core.train_classifier / core.train_score, as the one-seed design trained them), on calibration
seeds only (>= 1000).

    nice -n 19 python -m benchmarks.diff_purify.seeds [--seeds 1000,...] [--profile default]

Both ways use the stage's sizes (``train`` of the profile) and the same draws (each network's own
generator, in the same order; the same initial weights), so every network must come out the same
bit for bit: the script checks it, and prints the CPU seconds of each way per part (classifiers,
score networks), their ratio batched / one after another, and the total. The perturbation data
(PGD on each seed's training digits) is made once per seed either way and not timed.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

TOLERANCE = 1e-4        # largest |batched - one after another| of a weight that counts as the same training

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402


def main() -> None:
    ap = seed_parser(__doc__)
    a, seeds = parse_seeds(ap)

    import torch

    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study
    from stages.diff_purify.batched import train_classifiers, train_scores
    from stages.diff_purify.core import train_classifier, train_score
    from stages.diff_purify.data import load_digits_split
    from stages.diff_purify.params import PARAMS
    from stages.diff_purify.train import adversarial_deltas, random_sign_deltas

    limit_threads()
    _, p = load_study("diff_purify", PARAMS, profile=a.profile)
    t = p.train
    splits = {s: load_digits_split(p.prepare.test_fraction, s)[:2] for s in seeds}
    print(f"profile {a.profile}: {len(seeds)} seeds {seeds}; classifiers hidden {t.clf_hidden}, {t.clf_steps} steps; "
          f"3 score networks a seed, hidden {t.score_hidden}, {t.score_steps} steps of {t.batch}", flush=True)

    cpu = {}
    t0 = time.process_time()
    clf_one = [train_classifier(*splits[s], t.clf_hidden, t.clf_steps, t.lr, t.batch, s * 1000 + 1)[0] for s in seeds]
    cpu[("classifiers", "one after another")] = time.process_time() - t0
    t0 = time.process_time()
    clf_bat, _ = train_classifiers([splits[s][0] for s in seeds], [splits[s][1] for s in seeds], t.clf_hidden,
                                   t.clf_steps, t.lr, t.batch, [s * 1000 + 1 for s in seeds])
    cpu[("classifiers", "batched")] = time.process_time() - t0

    jobs = []                  # the stage's score networks: (data, sigma range, seed)
    for s, clf in zip(seeds, clf_bat):
        x, y = torch.as_tensor(splits[s][0]), torch.as_tensor(splits[s][1])
        g = torch.Generator().manual_seed(s * 1000 + 3)
        deltas = adversarial_deltas(clf, x, y, t.pert_eps, t.pert_pgd_steps, g).numpy()
        noise = random_sign_deltas(tuple(x.shape), t.pert_eps, g).numpy()
        jobs += [(splits[s][0], tuple(t.prior_sigmas), s * 1000 + 2), (deltas, tuple(t.pert_sigmas), s * 1000 + 4),
                 (noise, tuple(t.pert_sigmas), s * 1000 + 4)]
    t0 = time.process_time()
    score_one = [train_score(d, t.score_hidden, t.score_steps, t.lr, t.batch, *sig, sd)[0] for d, sig, sd in jobs]
    cpu[("score networks", "one after another")] = time.process_time() - t0
    t0 = time.process_time()
    score_bat, _ = train_scores([j[0] for j in jobs], t.score_hidden, t.score_steps, t.lr, t.batch,
                                [j[1] for j in jobs], [j[2] for j in jobs])
    cpu[("score networks", "batched")] = time.process_time() - t0

    worst = max(float((v - b.state_dict()[k]).abs().max()) for one, bat in ((clf_one, clf_bat), (score_one, score_bat))
                for o, b in zip(one, bat) for k, v in o.state_dict().items())
    same = worst == 0.0
    for part in ("classifiers", "score networks"):
        one, bat = cpu[(part, "one after another")], cpu[(part, "batched")]
        print(f"  {part}: one after another {one:.1f} CPU s, batched {bat:.1f} CPU s, ratio {bat / one:.3f}", flush=True)
    one = sum(v for (_, w), v in cpu.items() if w == "one after another")
    bat = sum(v for (_, w), v in cpu.items() if w == "batched")
    print(f"all: one after another {one:.1f} CPU s, batched {bat:.1f} CPU s, ratio batched / one after another "
          f"{bat / one:.3f}; every network " + ("the same bit for bit" if same else "DIFFERS"), flush=True)
    if not same:
        # Some CPUs' kernels give a row different last bits inside a batch (an AMD EPYC with
        # AVX-512, 2026-12-07: 7e-9 after one step, 4e-7 after 300, also under MKL_CBWR=COMPATIBLE;
        # tests/helpers.bit_exact_batching). A batching error (a seed's data or stream mixed up)
        # moves weights by orders of magnitude more: fail only past float32 rounding's reach.
        print(f"  largest difference between a batched and a one-after-another weight: {worst:.2e} "
              f"(limit {TOLERANCE:.0e}: float32 rounding of this CPU's kernels)", flush=True)
        if worst > TOLERANCE:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
