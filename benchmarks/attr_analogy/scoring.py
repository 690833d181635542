"""attr_analogy: our re-implementations against the libraries that also do them, in one run.

    python benchmarks/attr_analogy/scoring.py [--K 10] [--analogies 2000] [--repeats 3]

1. Analogy scoring (3CosAdd, query words excluded) on embeddings of the exact attribute model
   (k = 2K eigenvectors of a noisy log M, so that not every answer is right): our vectorised
   ``predict_hits`` vs gensim ``KeyedVectors.most_similar(positive=[b, c], negative=[a])``
   one question at a time. Reports agreement (same hit/miss per question) and the speed ratio.
2. Real text: our 3CosAdd on the covered Mikolov questions vs gensim's
   ``evaluate_word_analogies`` (questions-words.txt) on the same log M embeddings
   (needs data/corpora/realtext: ``python -m stages.corpora realtext``).
3. Spectrum of M: the Kronecker-factor eigenpairs (``exact_m_spectrum``) vs numpy's dense
   ``eigh`` of the 2^K x 2^K matrix: agreement of the leading eigenvalues and the speed ratio.

``--smoke`` runs it at tiny sizes in seconds (what CI runs): K = 5, 50 questions, one repeat; part 2
on a stand-in realtext corpus (gensim's small lee.cor, written by the corpora stage's run_realtext
into a temporary folder, never data/); part 3 at K = 5 only.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmarks.bench import best_of  # noqa: E402


def keyed_vectors(W, names):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(W.shape[1])
    kv.add_vectors(names, W.astype("float32"))
    return kv


def smoke_realtext(folder: Path) -> Path:
    """A stand-in for data/corpora/realtext (``--smoke``): the corpora stage's own run_realtext on
    gensim's small lee.cor (50 documents), with a stand-in stage context that writes into ``folder``."""
    import os
    from types import SimpleNamespace

    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    from stages.common.corpora import corpus_path
    from stages.corpora.stage import run_realtext

    ctx = SimpleNamespace(params=SimpleNamespace(realtext=SimpleNamespace(text="lee.cor", min_count=2, window=5)),
                          path=lambda rel: folder / rel)
    run_realtext(ctx)
    print("smoke: no data/corpora; part 2 on a stand-in realtext corpus (lee.cor) in a temporary folder")
    return folder / corpus_path("realtext")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--K", type=int, default=10)
    ap.add_argument("--analogies", type=int, default=2000, help="questions in part 1")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    args = ap.parse_args()
    if args.smoke:
        args.K, args.analogies, args.repeats = 5, 50, 1

    import numpy as np

    from stages.attr_analogy import model as m
    from stages.common.corpora.attributes import vocab_names

    K = args.K
    p, s = np.linspace(0.3, 0.5, K), np.linspace(0.4, 0.6, K)
    rng = np.random.default_rng(0)
    L = np.log(m.m_from_counts(m.lognormal_noise(m.dense_joint(p, s), 1.5, rng)))
    W = m.top_spectrum(L, 2 * K).embedding(2 * K)
    q = m.flip_analogies(K, max(1, args.analogies // K), np.random.default_rng(1))
    names = vocab_names(K)

    # 1. scoring: ours vs gensim most_similar ------------------------------------------------
    W32 = W.astype("float32").astype("float64")          # gensim stores float32: same inputs
    t_ours, hits = best_of(lambda: m.predict_hits(W32, q, "3cosadd"), args.repeats)
    kv = keyed_vectors(W, names)

    def gensim_hits():
        out = []
        for a, b, c, d in zip(q.a, q.b, q.c, q.d):
            top = kv.most_similar(positive=[names[b], names[c]], negative=[names[a]], topn=1)[0][0]
            out.append(top == names[d])
        return np.array(out)

    t_gensim, g_hits = best_of(gensim_hits, 1)
    agree = float((hits == g_hits).mean())
    print(f"1. 3CosAdd on {len(q)} attribute-flip questions, V = {2 ** K}, k = {2 * K}, noisy log M:")
    print(f"   accuracy ours {hits.mean():.4f}, gensim {g_hits.mean():.4f}; same verdict on {100 * agree:.2f}% of questions")
    print(f"   time ours {t_ours * 1e3:.1f} ms, gensim most_similar {t_gensim * 1e3:.1f} ms "
          f"-> ours is {t_gensim / t_ours:.1f}x faster")

    # 2. real text: ours vs gensim evaluate_word_analogies -----------------------------------
    rt = REPO / "data/corpora/realtext"
    if args.smoke:
        tmp = tempfile.TemporaryDirectory(prefix="attr_analogy_smoke_")
        rt = smoke_realtext(Path(tmp.name))
    if (rt / "counts").exists():
        from gensim.test.utils import datapath

        from stages.attr_analogy.data import read_counts
        from stages.common.corpora import load_analogy_table

        c = read_counts(rt)
        an = load_analogy_table(rt / "analogies")
        _, Lr = m.sparse_m_from_counts(c.counts)
        Wr = m.top_spectrum(Lr, 100, tol=1e-6).embedding(100).astype("float32").astype("float64")
        index = {w: i for i, w in enumerate(c.vocab)}
        cov = [i for i, ok in enumerate(an["covered"]) if ok]
        qr = m.Analogies(*(np.array([index[an[x][i]] for i in cov]) for x in "abcd"), relation=np.zeros(len(cov), int))
        t_o, h = best_of(lambda: m.predict_hits(Wr, qr, "3cosadd"), args.repeats)
        kvr = keyed_vectors(Wr, c.vocab)
        t_g, (score, sections) = best_of(lambda: kvr.evaluate_word_analogies(
            datapath("questions-words.txt"), restrict_vocab=len(c.vocab), case_insensitive=True), 1)
        total = next(sec for sec in sections if sec["section"] == "Total accuracy")
        g_correct, g_n = len(total["correct"]), len(total["correct"]) + len(total["incorrect"])
        print(f"2. lee_background log M, k = 100, {len(cov)} covered questions:")
        print(f"   ours {int(h.sum())}/{len(cov)} correct, gensim evaluate_word_analogies {g_correct}/{g_n} "
              f"(score {score:.4f})")
        print(f"   time ours {t_o * 1e3:.1f} ms, gensim {t_g * 1e3:.1f} ms -> ours is {t_g / t_o:.1f}x faster")
    else:
        print("2. skipped: data/corpora/realtext is missing (python -m stages.corpora realtext)")

    # 3. spectrum: Kronecker factors vs dense eigh ---------------------------------------------
    for KK in sorted({K} if args.smoke else {K, 12}):
        pp, ss = np.linspace(0.3, 0.5, KK), np.linspace(0.4, 0.6, KK)
        n = 3 * KK
        t_k, spec = best_of(lambda: m.exact_m_spectrum(pp, ss, n), args.repeats)
        t0 = time.perf_counter()
        M = m.dense_m(pp, ss)
        t_build = time.perf_counter() - t0
        t_d, dense = best_of(lambda: np.linalg.eigh(M), 1)
        vals = dense[0][::-1][:n]
        rel = float(np.max(np.abs(spec.values - vals) / vals))
        print(f"3. spectrum of M, K = {KK} (V = {2 ** KK}), top {n} eigenpairs: max relative difference {rel:.1e};")
        print(f"   Kronecker {t_k * 1e3:.2f} ms, dense eigh {t_d:.2f} s (+ {t_build:.2f} s to build M) "
              f"-> {(t_d + t_build) / t_k:.0f}x faster")
    print(f"(ours: best of {args.repeats} runs; gensim and dense eigh: one run each)")


if __name__ == "__main__":
    main()
