"""w2v_quartic calibration, on calibration seeds only (>= 1000, never a verdict seed): does the
downstream must see the paper's idea, and what do five seeds cost.

The must compares the quartic model (the omniscient reweighting, trained from small init; it
reaches the closed form V_d Lambda_d^(1/2) of M*) with gensim's Word2Vec on precision@k of topic
retrieval on `overlap_rich`: per seed |quartic - gensim| / max(0.05, 2 x gensim's seed std) <= 1,
judged over the seeds by the t-interval of the mean (stages/common/inference.judge). Its control
is the same figure for an arm without the paper's target: the plain factorisation of the centred
co-occurrences P - P_i P_j (stages/w2v_quartic/draws.plain_factorisation: M* without its
normalisation). Each seed samples its own corpus (draws.sample_corpus), as the stages do.

    nice -n 19 python -m benchmarks.w2v_quartic.calibration [--seeds 1000,1001,...] [--profile default]

Prints, per seed and arm, the score and gap/tolerance; then each arm's mean, 90% t-interval and
verdict under the must's rule. Context arms (not the control): PPMI's factorisation (log P/(P_i P_j)
clipped at 0) and the closed form on word labels shuffled (a blind input). ``--smoke`` runs it at
the smoke profile's sizes in seconds (what CI runs): two calibration seeds.
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
    ap.add_argument("--seeds", default=",".join(map(str, CALIBRATION_SEEDS)))
    ap.add_argument("--profile", default="default", choices=["smoke", "default", "paper"])
    ap.add_argument("--role", default="downstream_rich", choices=["downstream", "downstream_rich"])
    ap.add_argument("--smoke", action="store_true", help="smoke sizes, two seeds: checks the script runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.profile, a.seeds = "smoke", "1000,1001"
    seeds = [int(s) for s in a.seeds.split(",")]
    if min(seeds) < 1000:
        raise SystemExit("calibration uses seeds >= 1000 only (the verdict seeds are < 1000)")

    import numpy as np
    import torch

    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.common.runtime.params import load_study
    from stages.w2v_quartic import draws, model, scores, theory
    from stages.w2v_quartic.baseline import gensim_embeddings
    from stages.w2v_quartic.evaluate import compare_to_gensim
    from stages.w2v_quartic.params import ROLES, W2VParams
    from stages.w2v_quartic.train import gensim_seed

    limit_threads(1)
    _, p = load_study("w2v_quartic", W2VParams, profile=a.profile)
    rp, gp, ep = getattr(p.train, a.role), p.train.gensim, p.evaluate
    spec = draws.topic_specs(a.profile)[rp.corpus]
    d, k = rp.dim, ep.retrieval_k
    arms = ("quartic", "closed_form", "plain", "ppmi", "shuffled")
    gap: dict[str, list[float]] = {m: [] for m in arms}
    t_all = time.process_time()
    print(f"profile {a.profile}, role {a.role} (corpus {rp.corpus}: V={spec.vocab}, {spec.documents} documents), "
          f"d={d}, precision@{k}; calibration seeds {seeds}", flush=True)
    for seed in seeds:
        t0 = time.process_time()
        c = draws.sample_corpus(spec, seed)
        keep = theory.keep_words(c.word_counts, rp.max_vocab)
        topic = np.asarray(c.word_truth["topic"])[keep]
        topic2 = np.asarray(c.word_truth["topic2"])[keep]
        P, u = theory.cooccurrence_stats(c.counts, c.word_counts, keep)
        M = theory.target_matrix(P, u)
        spec_m = theory.spectrum(M, d)
        target = model.Target.build(P, u)
        W0 = model.init_weights(len(keep), d, rp.init_scale, [seed, ROLES.index(a.role)])
        res = model.train("quartic", target, W0, theory.step_size(spec_m, rp.lr_scale), rp.steps, rp.steps,
                          torch.as_tensor(spec_m.vectors), d)
        with np.errstate(divide="ignore"):
            ppmi = np.maximum(np.log(P / np.outer(u, u)), 0.0)
        s_ppmi = theory.spectrum(ppmi, d)
        cf = theory.closed_form(spec_m.values[:d], spec_m.vectors[:, :d])
        perm = np.random.default_rng([seed, 99]).permutation(len(keep))
        emb = {"quartic": [res["W"]], "closed_form": [cf],
               "plain": [draws.plain_factorisation(P, u, d)],
               "ppmi": [theory.closed_form(s_ppmi.values[:d], s_ppmi.vectors[:, :d])],
               "shuffled": [cf[perm]]}
        vocab = [c.vocab[i] for i in keep]
        toks = c.token_sentences()
        emb["gensim"] = [gensim_embeddings(toks, vocab, d, int(c.truth["window"]), gensim_seed(seed, j), gp)[0]
                         for j in range(rp.gensim_seeds)]
        sc = {m: [scores.retrieval_precision(E, topic, topic2, k) for E in Es] for m, Es in emb.items()}
        s = {m: float(np.mean(v)) for m, v in sc.items()}
        s["gensim_std"] = float(np.std(sc["gensim"], ddof=1)) if len(sc["gensim"]) > 1 else 0.0
        s["sgns"] = s["quartic"]
        line = []
        for m in arms:
            g = compare_to_gensim(s, ep, quartic=m)["gap_over_tolerance"]
            gap[m].append(g)
            line.append(f"{m} {s[m]:.3f} ({g:.2f})")
        print(f"  seed {seed}: gensim {s['gensim']:.3f} ± {s['gensim_std']:.3f}; " + ", ".join(line)
              + f"  [{time.process_time() - t0:.1f} CPU s]", flush=True)
    print("\nper arm: gap / tolerance over the seeds (check <= 1, rule interval: 90% t-interval)")
    for m in arms:
        j = judge(gap[m], "<=", 1.0, "interval")
        lo, hi = j.interval if j.interval else (float("nan"),) * 2
        print(f"  {m:12s} [{', '.join(f'{x:.2f}' for x in gap[m])}] mean {j.mean:.2f} [{lo:.2f}, {hi:.2f}] "
              f"-> {j.verdict}" + ("   <- the must's control" if m == "plain" else ""))
    print(f"total {time.process_time() - t_all:.0f} CPU s")


if __name__ == "__main__":
    main()
