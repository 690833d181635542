"""attr_analogy diagnostics behind the ledger notes of the claims that fail (not speed benchmarks).

    python benchmarks/attr_analogy/probes.py [--pairs 2e6 2e7 1e8] [--spread broad]

1. Corpus size (claims ``logm_not_below_m``, ``logm_beats_m``): reads the ground truth
   (p_k, s_k) of one attribute corpus the corpora stage wrote (``data/corpora/attributes/
   <spread>``), samples counts of several sizes from the exact joint with the study's own
   sampler (Poissonised, seed fixed) and prints, per size, the share of zero cells, Eq. 13
   accuracy of M and log M embeddings at a few k, and the minimum of log M - M over k >= K+1.
2. Removed cells as unseen (claim ``removal_persists``): the pair-removal ablation on the
   ``small`` corpus with the pipeline's pseudocount and with none (PMI_0: removed and unseen
   cells get log M = 0): log M accuracy before / after at k = K+1 and the minimum after/before
   ratio over k in [2K, 3K].
3. Removed cells as missing data (claim ``removal_persists``): with the pipeline's pseudocount
   elsewhere, the removed cells alone set to log M = 0 (independence), or filled by rank-2K
   hard-impute matrix completion (the low-rank structure of the rest of the matrix predicts
   them, as a model that ignores unobserved pairs would); same pooling and window.
4. Why removal costs accuracy at k in [2K, 3K]: per relation r, how antisymmetric under
   flipping attribute r the eigenvectors K+2..3K of the sampled log M are (1 - v . v[i ^ r]:
   0 symmetric, 1 unrelated, 2 antisymmetric), before and after removal, and the mean shift
   of log M at the removed cells. A symmetric mode adds the same to a and b = a^r, so it cannot
   hurt an r-analogy; an antisymmetric one adds opposite amounts and can.
Same analogies and power as the default profile.

``--smoke`` runs it at tiny sizes in seconds (what CI runs): tiny stand-in corpora (K = 5) made in
a temporary folder with the corpora stage's generator, one sampled size, 20 analogies a relation.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.attr_analogy import stand_ins  # noqa: E402


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
    ap.add_argument("--seed", type=int, default=1000, help="calibration seed (>= 1000) of the resampled corpora")
    ap.add_argument("--analogy-seed", type=int, default=0,
                    help="data seed of the flip analogies (the study's train.analogy_seed: fixed data)")
    ap.add_argument("--removal-corpus", default="small")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.seed < 1000:
        raise SystemExit("benchmarks use calibration seeds >= 1000 only (the verdict seeds are < 1000)")

    if a.smoke:
        tmp = tempfile.TemporaryDirectory(prefix="attr_analogy_smoke_")
        root = stand_ins.smoke_corpora(Path(tmp.name), [a.spread, a.removal_corpus])
        a.pairs, a.per_relation = [2e4], 20
    else:
        root = REPO / corpus_path("attributes")
    corpus = read_counts(root / a.spread)
    pk, sk = np.asarray(corpus.truth["marginal"]), np.asarray(corpus.truth["strength"])
    K = len(pk)
    P = model.dense_joint(pk, sk)
    q = model.flip_analogies(K, a.per_relation, np.random.default_rng([a.analogy_seed, RNG_ANALOGIES]))
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

    from stages.attr_analogy.evaluate import removal_metrics
    from stages.attr_analogy.train import removal_ablation

    small = read_counts(root / a.removal_corpus)
    print(f"\npair removal on {a.removal_corpus!r}, log M, Eq. 13 (relations pooled)")
    for pc in (a.pseudocount, 0.0):
        res = removal_ablation(small, K, q, SimpleNamespace(pseudocount=pc, power=0.5,
                                                            removal_relations=list(range(K))))
        lm = removal_metrics(res, K, "eq13")["logM"]        # the pipeline's own pooling and window
        print(f"  pseudocount {pc:<4}: k=K+1 before {lm['before_K1']:.3f} after {lm['after_K1']:.3f}; "
              f"k in [2K, 3K] mean before {lm['before_mean_2K_3K']:.3f}, min after/before "
              f"{lm['ratio_min']:.3f}")

    def pmi0(L, mask):
        L = L.copy()
        L[mask] = 0.0
        return L

    fills = {"removed cells log M = 0": pmi0,
             "removed cells hard-imputed, rank 2K": lambda L, mask: model.hard_impute(L, mask, 2 * K)}
    print(f"\nremoved cells as missing data (pseudocount {a.pseudocount} elsewhere)")
    for name, fill in fills.items():
        res = removal_ablation(small, K, q, SimpleNamespace(pseudocount=a.pseudocount, power=0.5,
                                                            removal_relations=list(range(K))), fill=fill)
        lm = removal_metrics(res, K, "eq13")["logM"]
        print(f"  {name:<36}: k=K+1 after {lm['after_K1']:.3f}; k in [2K, 3K] mean after "
              f"{lm['after_mean_2K_3K']:.3f} (before {lm['before_mean_2K_3K']:.3f}), min after/before "
              f"{lm['ratio_min']:.3f}")

    print("\neigenvectors K+2..3K of the sampled log M: mean antisymmetry under flipping attribute r")
    dense = small.counts.toarray()
    idx = np.arange(2 ** K)

    def log_m_and_modes(C):
        L = model.log_of(model.m_from_counts(C, a.pseudocount))
        return L, model.top_spectrum(L, 3 * K).vectors[:, K + 1:]

    def antisymmetry(U, r):
        return float((1 - np.einsum("ij,ij->j", U, U[idx ^ (1 << r)])).mean())

    L0, U0 = log_m_and_modes(dense)                      # before removal: the same for every r
    for r in range(K):
        mask = model.relation_mask(K, r)
        L1, U1 = log_m_and_modes(model.remove_relation_pairs(dense, K, r))
        print(f"  r={r}: before {antisymmetry(U0, r):.2f}, after {antisymmetry(U1, r):.2f}; log M at the "
              f"removed cells {L0[mask].mean():+.2f} -> {L1[mask].mean():+.2f}")

if __name__ == "__main__":
    main()
