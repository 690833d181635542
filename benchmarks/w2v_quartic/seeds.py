"""w2v_quartic: the verdict seeds batched (a seed dimension in the full-batch runs) against one
seed after another, on calibration seeds (>= 1000, never a verdict seed).

    OMP_NUM_THREADS=1 python benchmarks/w2v_quartic/seeds.py [--profile default] [--seeds 1000,...]

For each role's corpus (each seed samples its own, as the train stage does: draws.sample_corpus)
and each loss (quartic, SGNS; the omniscient weights, and word2vec's weights where the profile
runs them), times the train stage's full-batch gradient descent (``model.train``: its steps, step
size and logging) for all seeds in one call with a leading seed dimension, and one seed after
another; checks that every seed's final W is the same bit for bit both ways; prints the CPU
seconds and the ratio batched / sequential. gensim (one worker, C code) cannot be batched and is
left out. ``--smoke`` runs it at the smoke profile's sizes on two seeds in seconds (what CI runs).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

CALIBRATION_SEEDS = [1000, 1001, 1002, 1003, 1004]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default", choices=["smoke", "default", "paper"])
    ap.add_argument("--seeds", default=",".join(map(str, CALIBRATION_SEEDS)))
    ap.add_argument("--roles", default="dynamics,downstream_rich")
    ap.add_argument("--smoke", action="store_true", help="smoke sizes, two seeds: checks the script runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.profile, a.seeds = "smoke", "1000,1001"
    seeds = [int(s) for s in a.seeds.split(",")]
    if min(seeds) < 1000:
        raise SystemExit("benchmarks use calibration seeds >= 1000 only (the verdict seeds are < 1000)")

    import numpy as np
    import torch

    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study
    from stages.w2v_quartic import draws, model, theory
    from stages.w2v_quartic.params import ROLES, W2VParams

    limit_threads(1)
    _, p = load_study("w2v_quartic", W2VParams, profile=a.profile)
    specs = draws.topic_specs(a.profile)
    wp, gp = p.train.word2vec_weights, p.train.gensim
    total = {"batched": 0.0, "sequential": 0.0}
    print(f"profile {a.profile}, calibration seeds {seeds}; CPU seconds of the full-batch runs", flush=True)
    for role in a.roles.split(","):
        rp = getattr(p.train, role)
        runs = []                              # (label, targets, etas, tracked eigenvectors, steps, log_every)
        omni, w2v, W0s = ([], [], []), ([], [], []), []
        for s in seeds:
            c = draws.sample_corpus(specs[rp.corpus], s)
            keep = theory.keep_words(c.word_counts, rp.max_vocab)
            P, u = theory.cooccurrence_stats(c.counts, c.word_counts, keep)
            V, d = len(keep), rp.dim
            spec = theory.spectrum(theory.target_matrix(P, u), min(d + rp.track_extra, V))
            omni[0].append(model.Target.build(P, u))
            omni[1].append(theory.step_size(spec, rp.lr_scale))
            omni[2].append(torch.as_tensor(spec.vectors))
            W0s.append(model.init_weights(V, d, rp.init_scale, [s, ROLES.index(role)]))
            if role in wp.roles:
                counts = theory.weighted_window_counts(c.sentence_ids(), keep, len(c.vocab),
                                                       int(c.truth["window"]), wp.window_weighting)
                t = model.Target.from_weights(*theory.word2vec_weights(counts / counts.sum(), u, gp.sample,
                                                                       gp.ns_exponent, gp.negative))
                sw = theory.spectrum((t.G * t.M).numpy(), min(d + rp.track_extra, V))
                w2v[0].append(t)
                w2v[1].append(wp.lr_scale / sw.max_abs)
                w2v[2].append(torch.as_tensor(sw.vectors))
        runs.append(("omniscient", omni, rp.steps, rp.log_every, list(model.KINDS)))
        if w2v[0]:
            runs.append(("word2vec weights", w2v, wp.steps, wp.log_every, list(wp.kinds)))
        for label, (targets, etas, Us), steps, log_every, kinds in runs:
            for kind in kinds:
                t0 = time.process_time()
                seq = [model.train(kind, t, W, e, steps, log_every, U, rp.dim)
                       for t, W, e, U in zip(targets, W0s, etas, Us)]
                t_seq = time.process_time() - t0
                t0 = time.process_time()
                batch = model.split_seeds(model.train(kind, model.stack_targets(targets), torch.stack(W0s), etas,
                                                      steps, log_every, torch.stack(Us), rp.dim), len(seeds))
                t_bat = time.process_time() - t0
                same = all(np.array_equal(b["W"], q["W"]) for b, q in zip(batch, seq))
                total["batched"] += t_bat
                total["sequential"] += t_seq
                print(f"  {role:15s} {label:16s} {kind:8s} {steps:5d} steps: sequential {t_seq:6.2f} s, "
                      f"batched {t_bat:6.2f} s, ratio batched/sequential {t_bat / t_seq:.2f}; "
                      f"every seed's W the same both ways: {same}", flush=True)
                if not same:
                    raise SystemExit("a seed's run differs between batched and sequential")
    print(f"all: sequential {total['sequential']:.1f} s, batched {total['batched']:.1f} s, "
          f"ratio batched/sequential {total['batched'] / total['sequential']:.2f}")


if __name__ == "__main__":
    main()
