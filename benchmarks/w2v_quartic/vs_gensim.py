"""Our full-batch SGNS (and its quartic approximation) in torch vs gensim's Word2Vec, in one run
on the same corpus: wall time and the downstream score, with their ratios.

    python benchmarks/w2v_quartic/vs_gensim.py [--profile default] [--corpus downstream] [--repeats 3]

The corpus and every setting come from stages/w2v_quartic/params.json (``w2v_quartic.<profile>.train.<corpus>``,
the topic corpus of ``corpora.<profile>.topics`` with that name). If the corpus folder is not
there (no stage makes it; ``python -m stages.corpora topics`` does by hand), it is generated into a temp folder first. Times are
medians over ``--repeats``; ours includes building the target from the counts; gensim's is one
seed (``workers=1``, as in the study). Score: precision@k topic retrieval (the study's score).
``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile's corpus, generated into a temp folder.
"""
from __future__ import annotations

import argparse
import atexit
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="default", choices=["smoke", "default", "paper"])
    ap.add_argument("--corpus", default="downstream", choices=["dynamics", "downstream", "downstream_rich"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:                    # the same code path at tiny sizes (figures meaningless)
        a.profile, a.repeats = "smoke", 1

    import numpy as np
    import torch

    from stages.common.corpora import corpus_path, topics, write_corpus
    from stages.corpora.stage import CorporaParams
    from stages.common.runtime.params import load_study
    from stages.w2v_quartic import model, scores, theory
    from stages.w2v_quartic.baseline import gensim_embeddings
    from stages.common.corpora import load_corpus
    from stages.w2v_quartic.params import W2VParams

    from stages.common.device import limit_threads
    threads = limit_threads()
    common, p = load_study("w2v_quartic", W2VParams, profile=a.profile)
    rp, gp, ep = getattr(p.train, a.corpus), p.train.gensim, p.evaluate
    if a.smoke:
        print("smoke: the smoke profile's sizes, 1 repeat, the corpus generated afresh", flush=True)
    folder = REPO / corpus_path("topics", rp.corpus)
    if a.smoke or not (folder / "truth.json").exists() or a.profile != common.profile:
        _, cp = load_study("corpora", CorporaParams, profile=a.profile)
        spec = next(c for c in cp.topics.corpora if c.name == rp.corpus)
        folder = Path(tempfile.mkdtemp(prefix="w2v_bench-")) / rp.corpus
        if a.smoke:
            atexit.register(shutil.rmtree, folder.parent, True)
        print(f"generating corpus {rp.corpus} ({a.profile}) in {folder}", flush=True)
        write_corpus(folder, topics.generate(spec, common.seed))
    c = load_corpus(folder)
    keep = theory.keep_words(c.word_counts, rp.max_vocab)
    topic = np.asarray(c.word_truth["topic"])[keep]
    topic2 = np.asarray(c.word_truth["topic2"])[keep]
    vocab = [c.vocab[i] for i in keep]
    n_tokens = int(c.word_counts.sum())

    def ours(kind: str):
        t0 = time.perf_counter()
        P, u = theory.cooccurrence_stats(c.counts, c.word_counts, keep)
        spec = theory.spectrum(theory.target_matrix(P, u), rp.dim)
        target = model.Target.build(P, u)
        W0 = model.init_weights(len(keep), rp.dim, rp.init_scale, [common.seed, 0])
        res = model.train(kind, target, W0, theory.step_size(spec, rp.lr_scale), rp.steps, rp.steps,
                          torch.as_tensor(spec.vectors), rp.dim)
        return time.perf_counter() - t0, res["W"]

    def theirs():
        E, secs = gensim_embeddings(c.tokens_path, vocab, rp.dim, int(c.truth["window"]), common.seed, gp)
        return secs, E

    rows = {}
    for name, fn in (("sgns_torch", lambda: ours("sgns")), ("quartic_torch", lambda: ours("quartic")),
                     ("gensim", theirs)):
        times, E = [], None
        for _ in range(a.repeats):
            secs, E = fn()
            times.append(secs)
        rows[name] = (statistics.median(times), scores.retrieval_precision(E, topic, topic2, ep.retrieval_k))

    print(f"\ncorpus {rp.corpus} ({a.profile}): V={len(keep)}, {n_tokens} tokens, d={rp.dim}; "
          f"ours: {rp.steps} full-batch steps; gensim: {gp.epochs} epochs, workers=1; torch threads {threads}")
    print(f"{'method':<15}{'seconds':>10}{'precision@' + str(ep.retrieval_k):>16}")
    for name, (secs, score) in rows.items():
        print(f"{name:<15}{secs:>10.2f}{score:>16.3f}")
    g = rows["gensim"]
    for name in ("sgns_torch", "quartic_torch"):
        print(f"{name} / gensim: time ratio {rows[name][0] / g[0]:.2f}x, score difference "
              f"{rows[name][1] - g[1]:+.3f}")


if __name__ == "__main__":
    main()
