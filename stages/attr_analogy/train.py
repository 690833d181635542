"""attr_analogy train: embeddings from the top-k eigenvectors of M and log M and their
analogy accuracy on two analogy sets -- the paper's T(k1, k2) (a and c differ in one attribute,
Sec. 6; ``paper_set`` in the results) and attribute flips (c any word sharing a's value of the
relation; the study's first set, kept as a variant) -- on

* the exact model of every ``spreads`` corpus (rebuilt from its truth.json: p_k, s_k), spectra
  from the Kronecker factors (M) and the rank-(K+1) factorisation (log M);
* the sampled corpus itself (counts written by the ``corpora-attributes`` stage);
* the pair-removal ablation on the smaller ``removal_corpus``: for each relation (attribute r),
  every co-occurrence of the pairs (i, i with r flipped) is removed and the embeddings rebuilt
  (and, the paper's Sec. 9 protocol on the same corpus, log M-hat set to 0 on those cells);
* the paper's own removal (Sec. 9, Fig. 3c) on the exact model of every spread: log M' = 0 on
  the strongest and on the weakest attribute's pairs; T(k1, k2) analogies that involve the
  pruned attribute against those that do not;
* a noise sweep on the exact model of ``noise.spread``: log-normal noise on P(i, j),
  vocabulary pruning, and corpus size (counts drawn from the exact P);
* real text: lee_background's co-occurrence counts (``corpora-realtext``) and the Mikolov
  questions its vocabulary covers.

Outputs: data/attr_analogy/results.json (every curve) and reports/attr_analogy/train.json
(a summary DVC tracks as metrics).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .params import AttrParams
from .paths import RESULTS, TRAIN_METRICS

SCORINGS = ("eq13", "3cosadd")

# one integer per random use, so that adding a use never shifts another's stream
RNG_ANALOGIES, RNG_NOISE, RNG_PRUNE, RNG_PAIRS, RNG_PAPER_SET = 1, 2, 3, 4, 5


def _check_corpora(corpora: dict, p) -> int:
    """All attribute corpora share K; the k sweep and the relations fit it. Returns K."""
    Ks = {name: int(c.truth.get("attributes", -1)) for name, c in corpora.items()}
    kinds = {name: c.truth.get("kind") for name, c in corpora.items()}
    bad = [n for n, k in kinds.items() if k != "attributes"]
    if bad:
        fail(f"attr_analogy.train: corpora {bad} are not attribute-model corpora (kind {[kinds[n] for n in bad]})")
    if len(set(Ks.values())) != 1:
        fail(f"attr_analogy.train: the attribute corpora must share K, got {Ks} "
              "(corpora.<profile>.attributes.corpora[*].attributes)")
    K = next(iter(Ks.values()))
    if p.k_max < 3 * K:
        fail(f"attr_analogy.train.k_max = {p.k_max}: must be >= 3K = {3 * K} (checks read k up to 3K)")
    if p.k_max > 2 ** K:
        fail(f"attr_analogy.train.k_max = {p.k_max}: larger than the vocabulary 2^K = {2 ** K}")
    if max(p.removal_relations) >= K:
        fail(f"attr_analogy.train.removal_relations = {p.removal_relations}: relations are attributes 0..{K - 1}")
    if p.pair_base_words is not None and p.pair_base_words > 2 ** (K - 2):
        fail(f"attr_analogy.train.pair_base_words = {p.pair_base_words}: at most 2^(K-2) = {2 ** (K - 2)} "
             f"base words per attribute pair for K = {K} (null = all)")
    return K


def _curves(spec, q, ks, power):
    from .model import accuracy_curve

    return accuracy_curve(spec, q, ks, power, SCORINGS)


def _remap(q, words):
    """Analogies over model word ids -> rows of a matrix restricted to ``words`` (sorted)."""
    import numpy as np

    from .model import Analogies

    pos = np.full(int(words.max()) + 1, -1)
    pos[words] = np.arange(len(words))
    return Analogies(pos[q.a], pos[q.b], pos[q.c], pos[q.d], q.relation)


def model_curves(name, corpus, K, q, ks, p, qt=None) -> dict:
    """Accuracy vs k of M and log M, exact and sampled, for one corpus: flip analogies ``q``
    and, when given, the paper's T(k1, k2) sets ``qt`` (under ``paper_set``)."""
    import numpy as np

    from . import model

    pk, sk = np.asarray(corpus.truth["marginal"]), np.asarray(corpus.truth["strength"])
    n = max(ks)
    ex_m, ex_l = model.exact_m_spectrum(pk, sk, n), model.exact_logm_spectrum(pk, sk)
    M = model.m_from_counts(corpus.counts, p.pseudocount)
    sa_m, sa_l = model.top_spectrum(M, n), model.top_spectrum(model.log_of(M), n)
    out = {}
    for source, spec_m, spec_l in (("exact", ex_m, ex_l), ("sampled", sa_m, sa_l)):
        out[source] = {
            "M": _curves(spec_m, q, ks, p.power), "logM": _curves(spec_l, q, ks, p.power),
            **({} if qt is None else
               {"paper_set": {"M": _curves(spec_m, qt, ks, p.power), "logM": _curves(spec_l, qt, ks, p.power)}}),
            "eigenvalues": {"M": spec_m.values[:3 * K + 2].tolist(), "logM": spec_l.values[:3 * K + 2].tolist()},
        }
    out["corpus"] = {"p": pk.tolist(), "s": sk.tolist(), "pairs": int(corpus.truth["pairs"]),
                     "cooccurrences": float(corpus.counts.sum()),
                     "zero_cells": float(1 - corpus.counts.nnz / corpus.counts.shape[0] ** 2)}
    out["exact"]["logM_rank"] = int((np.abs(ex_l.values) > 1e-9 * np.abs(ex_l.values).max()).sum())
    return out


def removal_ablation(corpus, K, q, p, fill=None, qt=None) -> dict:
    """Before/after accuracy per relation r: every co-occurrence of the pairs (i, i^r) removed.

    Flip analogies of relation r (``q``); with ``qt`` (the paper's T(k1, k2) sets) also the
    T analogies that involve r (as k1 or k2), for M and log M after the corpus removal and for
    log M-hat with those cells set to 0 and nothing else changed (the paper's Sec. 9 removal,
    applied to the sampled matrix: ``pruned``).

    ``fill`` (None in the pipeline): a function (log M, mask of the removed cells) -> log M that
    replaces the removed cells' values after removal, for probes that treat them as missing data
    (benchmarks/attr_analogy/probes.py); None keeps them as counted zeros (smoothed by the
    pseudocount)."""
    from tqdm import tqdm

    from . import model

    ks = list(range(1, 3 * K + 1))
    dense = corpus.counts.toarray()

    def spectra(C, mask=None):
        M = model.m_from_counts(C, p.pseudocount)
        L = model.log_of(M) if mask is None else fill(model.log_of(M), mask)
        return {"M": model.top_spectrum(M, 3 * K), "logM": model.top_spectrum(L, 3 * K)}, L

    before, L_before = spectra(dense)
    if qt is not None:       # every T analogy scored once before removal; subsets read off below
        t_before = {(mat, sc): model.hits_by_k(before[mat], qt, ks, p.power, sc)
                    for mat in ("M", "logM") for sc in SCORINGS}
    rows = []
    for r in tqdm(p.removal_relations, desc="pair removal"):
        qr = q.subset(q.relation == r)
        C = model.remove_relation_pairs(dense, K, r)
        after, _ = spectra(C, None if fill is None else model.relation_mask(K, r))
        row = {
            "relation": r, "n_analogies": len(qr),
            "removed_cooccurrences": float(dense.sum() - C.sum()),
            "before": {mat: _curves(before[mat], qr, ks, p.power) for mat in ("M", "logM")},
            "after": {mat: _curves(after[mat], qr, ks, p.power) for mat in ("M", "logM")},
        }
        if qt is not None:
            inv = qt.involves(r)
            qtr = qt.subset(inv)
            pruned = model.top_spectrum(model.prune_relation_logm(L_before, K, r), 3 * K)
            row["paper_set"] = {
                "n_analogies": int(inv.sum()),
                "before": {mat: {sc: t_before[mat, sc][:, inv].mean(1).tolist() for sc in SCORINGS}
                           for mat in ("M", "logM")},
                "after": {mat: _curves(after[mat], qtr, ks, p.power) for mat in ("M", "logM")},
                "pruned": {"logM": _curves(pruned, qtr, ks, p.power)},
            }
        rows.append(row)
    return {"ks": ks, "pairs": int(corpus.truth["pairs"]), "relations": rows,
            "zero_cells": float((dense == 0).mean())}


def removal_exact(corpus, K, qt, p) -> dict:
    """The paper's removal on the exact model (Sec. 9, Fig. 3c): log M' = log M with the
    2^(K-1) pairs of the strongest, then of the weakest, attribute set to 0; accuracy for
    k = 1..3K of the T(k1, k2) analogies that involve the pruned attribute and of those that do
    not, before (exact log M) and after."""
    import numpy as np

    from . import model

    pk, sk = np.asarray(corpus.truth["marginal"]), np.asarray(corpus.truth["strength"])
    ks = list(range(1, 3 * K + 1))
    L = np.log(model.dense_m(pk, sk))
    strongest, weakest = model.strongest_weakest(pk, sk)
    hits_before = {sc: model.hits_by_k(model.exact_logm_spectrum(pk, sk), qt, ks, p.power, sc) for sc in SCORINGS}
    out = {"ks": ks, "strongest": strongest, "weakest": weakest, "pruned": {}}
    for label, r in (("strongest", strongest), ("weakest", weakest)):
        inv = qt.involves(r)
        spec = model.top_spectrum(model.prune_relation_logm(L, K, r), 3 * K)
        hits_after = {sc: model.hits_by_k(spec, qt, ks, p.power, sc) for sc in SCORINGS}
        entry = {"relation": r, "n_involving": int(inv.sum()), "n_other": int((~inv).sum())}
        for when, hits in (("before", hits_before), ("after", hits_after)):
            entry[when] = {"involving": {sc: h[:, inv].mean(1).tolist() for sc, h in hits.items()},
                           "other": {sc: h[:, ~inv].mean(1).tolist() for sc, h in hits.items()}}
        out["pruned"][label] = entry
    return out


def noise_sweep(corpus, K, p, seed) -> dict:
    """Accuracy at k = K+1 and 2K under log-normal noise, pruning and finite corpora."""
    import numpy as np
    from tqdm import tqdm

    from . import model

    pk, sk = np.asarray(corpus.truth["marginal"]), np.asarray(corpus.truth["strength"])
    P = model.dense_joint(pk, sk)
    V = len(P)
    ks = [K + 1, 2 * K]
    n_q = p.analogies_per_relation

    def measure(Mat, q):
        specs = {"M": model.top_spectrum(Mat, 2 * K), "logM": model.top_spectrum(model.log_of(Mat), 2 * K)}
        return {mat: _curves(specs[mat], q, ks, p.power) for mat in specs}

    q_all = model.flip_analogies(K, n_q, np.random.default_rng([seed, RNG_ANALOGIES, 1]))
    out = {"ks": ks, "spread": p.noise.spread, "sigma": [], "keep": [], "pairs": []}
    rng = np.random.default_rng([seed, RNG_NOISE])
    for sigma in tqdm(p.noise.sigmas, desc="noise: log-normal"):
        out["sigma"].append({"level": sigma, **measure(model.m_from_counts(model.lognormal_noise(P, sigma, rng)), q_all)})
    rng = np.random.default_rng([seed, RNG_PRUNE])
    for keep in tqdm(p.noise.keep, desc="noise: pruning"):
        words = np.sort(rng.choice(V, size=max(4, round(keep * V)), replace=False))
        q = model.flip_analogies(K, n_q, rng, words=words)
        out["keep"].append({"level": keep, "words": len(words), "n_analogies": len(q),
                            **measure(model.m_from_counts(P[np.ix_(words, words)]), _remap(q, words))})
    rng = np.random.default_rng([seed, RNG_PAIRS])
    for pairs in tqdm(p.noise.pairs, desc="noise: corpus size"):
        C = model.sample_counts(P, pairs, rng)
        out["pairs"].append({"level": pairs, "zero_cells": float((C == 0).mean()),
                             **measure(model.m_from_counts(C, p.pseudocount), q_all)})
    return out


def realtext(ctx, p) -> dict:
    import numpy as np

    from stages.common.corpora import corpus_path

    from . import model
    from stages.common.corpora import load_analogy_table

    from .data import read_counts

    c = read_counts(ctx.path(corpus_path("realtext")))
    an = load_analogy_table(ctx.path(corpus_path("realtext")) / "analogies")
    index = {w: i for i, w in enumerate(c.vocab)}
    cov = [i for i, ok in enumerate(an["covered"]) if ok and all(an[x][i] in index for x in "abcd")]
    q = model.Analogies(*(np.array([index[an[x][i]] for i in cov], dtype=np.int64) for x in "abcd"),
                        relation=np.zeros(len(cov), dtype=np.int64))
    ks = [k for k in p.realtext.ks if k < len(c.vocab)]
    M, L = model.sparse_m_from_counts(c.counts)
    out = {"vocab": len(c.vocab), "questions": len(an["a"]), "covered": len(cov), "ks": ks,
           "text": c.truth.get("text"), "window": c.truth.get("window"),
           "sections": {s: sum(1 for i in cov if an["section"][i] == s) for s in sorted(set(an["section"]))}}
    for mat, A in (("M", M), ("logM", L)):
        spec = model.top_spectrum(A, max(ks), tol=p.realtext.eig_tol)
        out[mat] = {sc: [int(model.predict_hits(spec.embedding(k, p.power), q, sc).sum()) for k in ks]
                    for sc in SCORINGS}
    return out


def main() -> None:
    with stage("attr_analogy", "train", AttrParams) as ctx:
        from stages.common.device import limit_threads

        limit_threads()
        import numpy as np
        from tqdm import tqdm

        from stages.common.corpora import corpus_path
        from stages.common.io import write_json

        from . import model
        from .data import read_counts

        p = ctx.params.train
        names = list(dict.fromkeys([*p.spreads, p.removal_corpus]))
        corpora = {}
        for name in names:
            try:
                corpora[name] = read_counts(ctx.path(corpus_path("attributes", name)))
            except FileNotFoundError as err:
                fail(f"attr_analogy.train: corpus {name!r} (named in stages/attr_analogy/params.json) "
                     f"is not there: {err}; "
                     "add it to corpora.<profile>.attributes.corpora")
        K = _check_corpora(corpora, p)
        V = 2 ** K
        ks = list(range(1, p.k_max + 1)) + [k for k in p.k_extra if k <= V]
        q = model.flip_analogies(K, p.analogies_per_relation, np.random.default_rng([ctx.seed, RNG_ANALOGIES]))
        qt = model.pair_analogies(K, p.pair_base_words, np.random.default_rng([ctx.seed, RNG_PAPER_SET]))

        spreads = {}
        for name in tqdm(p.spreads, desc="exact and sampled spectra"):
            spreads[name] = model_curves(name, corpora[name], K, q, ks, p, qt)
        removal = removal_ablation(corpora[p.removal_corpus], K, q, p, qt=qt)
        removal_ex = {name: removal_exact(corpora[name], K, qt, p)
                      for name in tqdm(p.spreads, desc="paper's removal, exact model")}
        noise = noise_sweep(corpora[p.noise.spread], K, p, ctx.seed)
        real = realtext(ctx, p)

        results = {"K": K, "V": V, "ks": ks, "scorings": list(SCORINGS), "power": p.power,
                   "n_analogies": len(q), "n_paper_set": len(qt), "pair_base_words": p.pair_base_words,
                   "saturation_corpus": p.saturation_corpus, "spread_order": list(p.spreads),
                   "spreads": spreads, "removal": removal, "removal_exact": removal_ex,
                   "noise": noise, "realtext": real}
        write_json(ctx.path(RESULTS), results)

        i1, i2 = ks.index(K + 1), ks.index(2 * K)
        summary = {"K": K, "n_analogies": len(q), "n_paper_set": len(qt), "realtext_covered": real["covered"]}
        for name, r in spreads.items():
            for source in ("exact", "sampled"):
                for mat in ("M", "logM"):
                    curve = r[source][mat]["eq13"]
                    summary[f"{source}.{name}.{mat}.acc_K1"] = curve[i1]
                    summary[f"{source}.{name}.{mat}.acc_2K"] = curve[i2]
                    ctx.run.log_curve(f"acc.{source}.{name}.{mat}.eq13", curve, steps=ks)
                    curve = r[source]["paper_set"][mat]["eq13"]
                    summary[f"paper_set.{source}.{name}.{mat}.acc_K1"] = curve[i1]
                    summary[f"paper_set.{source}.{name}.{mat}.acc_2K"] = curve[i2]
                    ctx.run.log_curve(f"acc_paper_set.{source}.{name}.{mat}.eq13", curve, steps=ks)
        write_json(ctx.path(TRAIN_METRICS), summary)
        for name, r in spreads.items():
            print(f"  {name}: exact log M at K+1 = {r['exact']['logM']['eq13'][i1]:.3f}, "
                  f"exact M at K+1 = {r['exact']['M']['eq13'][i1]:.3f}, sampled log M at K+1..2K "
                  f"min = {min(r['sampled']['logM']['eq13'][i1:i2 + 1]):.3f}")


if __name__ == "__main__":
    main()
