"""attr_analogy diagnostic: does a bigger sampled corpus rescue log M >= M at large k?

    python benchmarks/attr_analogy_corpus_size.py [--pairs 2e6 2e7 1e8] [--spread broad]

Not a speed benchmark: a probe behind the ledger note of claims ``logm_not_below_m`` and
``logm_beats_m``. It reads the ground truth (p_k, s_k) of one attribute corpus that the
corpora stage wrote (``data/corpora/attributes/<spread>``), samples counts of several sizes
from the exact joint with the study's own sampler (Poissonised, seed fixed), and prints, per
size: the share of zero cells, Eq. 13 accuracy of M and log M embeddings at a few k, and the
minimum of log M - M over k >= K+1 with the k where it occurs. Same analogies, pseudocount and
power as the default profile.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    import numpy as np
    import scipy.sparse as sp

    from stages.attr_analogy import model
    from stages.attr_analogy.data import read_counts
    from stages.attr_analogy.train import RNG_ANALOGIES, model_curves
    from stages.common.corpora import corpus_path

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spread", default="broad")
    ap.add_argument("--pairs", type=float, nargs="+", default=[2e6, 2e7, 1e8])
    ap.add_argument("--per-relation", type=int, default=200)
    ap.add_argument("--pseudocount", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    corpus = read_counts(REPO / corpus_path("attributes", a.spread))
    pk, sk = np.asarray(corpus.truth["marginal"]), np.asarray(corpus.truth["strength"])
    K = len(pk)
    P = model.dense_joint(pk, sk)
    q = model.flip_analogies(K, a.per_relation, np.random.default_rng([a.seed, RNG_ANALOGIES]))
    ks = list(range(K + 1, 4 * K + 1)) + [k for k in (60, 100, 200) if k <= len(P)]
    show = [K + 1, 2 * K, 3 * K, 4 * K, *[k for k in (60, 100, 200) if k <= len(P)]]
    p = SimpleNamespace(pseudocount=a.pseudocount, power=0.5)
    print(f"{a.spread} spread, K={K}, {len(q)} analogies, Eq. 13 accuracy of the sampled M / log M")
    print(f"{'pairs':>12} {'zero cells':>10}  " + "  ".join(f"k={k:<3d} M/logM" for k in show)
          + "   min(logM-M) at k")
    for pairs in a.pairs:
        C = model.sample_counts(P, int(pairs) // 2, np.random.default_rng([a.seed, int(pairs)]))
        sampled = SimpleNamespace(counts=sp.csr_matrix(C), truth={**corpus.truth, "pairs": int(pairs)})
        out = model_curves(a.spread, sampled, K, q, ks, p)
        m, lm = np.array(out["sampled"]["M"]["eq13"]), np.array(out["sampled"]["logM"]["eq13"])
        d = lm - m
        cells = "  ".join(f"{m[ks.index(k)]:.2f}/{lm[ks.index(k)]:.2f}".ljust(12) for k in show)
        print(f"{int(pairs):>12,d} {out['corpus']['zero_cells']:>10.3f}  {cells}   "
              f"{d.min():+.3f} at k={ks[int(d.argmin())]}")


if __name__ == "__main__":
    main()
