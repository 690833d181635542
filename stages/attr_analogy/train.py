"""attr_analogy train: embeddings from the top-k eigenvectors of M and log M and their
analogy accuracy on two analogy sets -- the paper's T(k1, k2) (a and c differ in one attribute,
Sec. 6; ``paper_set`` in the results) and attribute flips (c any word sharing a's value of the
relation; the study's first set, kept as a variant). Both sets are fixed data, the same for every
verdict seed (T(k1, k2) lists every base word; the flips are drawn once from ``analogy_seed``).

Run once (no draw; ``shared`` in the results):

* the exact model of every ``spreads`` corpus (its truth.json: p_k, s_k), spectra from the
  Kronecker factors (M) and the rank-(K+1) factorisation (log M);
* the exact attribute MIXTURE of the same p_k, s_k (:func:`model.mixture_m`: each pair
  correlated through one attribute, so the attributes add up in M instead of multiplying), the
  control of the (iii) checks, T(k1, k2) for k = 1..3K;
* the paper's own removal (Sec. 9, Fig. 3c) on the exact model of every spread: log M' = 0 on
  the strongest and on the weakest attribute's pairs; T(k1, k2) analogies that involve the
  pruned attribute against those that do not;
* real text: lee_background's co-occurrence counts (``corpora-realtext``) and the Mikolov
  questions its vocabulary covers.

Run for every verdict seed (``ctx.seeds``, one after another in this process; ``per_seed``): a
verdict seed is one independent repetition of the sampled experiment. It draws its own corpora
from the exact joints, the same attribute model and sizes as the shared corpora (``pairs`` of
each), by Poissonisation (:func:`model.sample_counts`, streams ``[seed, RNG_CORPUS, corpus]``);
and its own mixture corpora of the same sizes (``[seed, RNG_CONTROL, corpus]``). On them:

* the sampled M-hat and log M-hat of every spread, both analogy sets, k over the sweep;
* the mixture corpora's M-hat and log M-hat, T(k1, k2), k = 1..3K (the control);
* the pair-removal ablation on the smaller ``removal_corpus``: for each relation (attribute r),
  every co-occurrence of the pairs (i, i with r flipped) is removed and the embeddings rebuilt
  (and, the paper's Sec. 9 protocol on the same corpus, log M-hat set to 0 on those cells);
* a noise sweep on the exact model of ``noise.spread``: log-normal noise on P(i, j),
  vocabulary pruning, and corpus size (counts drawn from the exact P).

The shared corpora's own counts (one draw, data_seed) are not read: a figure resting on them
would be one draw for every verdict seed. Outputs: data/attr_analogy/results.json (every curve)
and reports/attr_analogy/train.json (a summary DVC tracks as metrics).
"""
from __future__ import annotations

import zlib

from stages.common.runtime.stage import fail, stage

from .params import AttrParams
from .paths import RESULTS, TRAIN_METRICS

SCORINGS = ("eq13", "3cosadd")

# one integer per random use, so that adding a use never shifts another's stream
RNG_ANALOGIES, RNG_NOISE, RNG_PRUNE, RNG_PAIRS, RNG_PAPER_SET, RNG_CORPUS, RNG_CONTROL = 1, 2, 3, 4, 5, 6, 7


def corpus_stream(name: str) -> int:
    """A corpus's own stream number (its name's CRC-32): a seed's corpora stay the same when a
    corpus is added to or removed from the params."""
    return zlib.crc32(name.encode())


def check_corpora(corpora: dict, p) -> int:
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


def _pk_sk(truth: dict):
    import numpy as np

    return np.asarray(truth["marginal"], float), np.asarray(truth["strength"], float)


def analogy_sets(K: int, p):
    """The two analogy sets, fixed data drawn once from ``p.analogy_seed`` (never a verdict
    seed): (attribute flips, the paper's T(k1, k2))."""
    from stages.common.seeds import rng

    from . import model

    q = model.flip_analogies(K, p.analogies_per_relation, rng(p.analogy_seed, RNG_ANALOGIES))
    qt = model.pair_analogies(K, p.pair_base_words, rng(p.analogy_seed, RNG_PAPER_SET))
    return q, qt


def exact_curves(truth: dict, K: int, q, ks, p, qt=None) -> dict:
    """Accuracy vs k of the exact M and log M of one corpus's model (flips ``q`` and, when
    given, T(k1, k2) ``qt`` under ``paper_set``), their leading eigenvalues and log M's rank."""
    import numpy as np

    from . import model

    pk, sk = _pk_sk(truth)
    spec_m, spec_l = model.exact_m_spectrum(pk, sk, max(ks)), model.exact_logm_spectrum(pk, sk)
    out = spectra_curves(spec_m, spec_l, K, q, ks, p, qt)
    out["logM_rank"] = int((np.abs(spec_l.values) > 1e-9 * np.abs(spec_l.values).max()).sum())
    return out


def sampled_curves(counts, K: int, q, ks, p, qt=None) -> dict:
    """Accuracy vs k of M-hat and log M-hat of one count matrix (same sets as :func:`exact_curves`)."""
    from . import model

    M = model.m_from_counts(counts, p.pseudocount)
    n = max(ks)
    return spectra_curves(model.top_spectrum(M, n), model.top_spectrum(model.log_of(M), n), K, q, ks, p, qt)


def spectra_curves(spec_m, spec_l, K, q, ks, p, qt) -> dict:
    """Accuracy vs k of the embeddings of two spectra (M's and log M's) on the flips ``q`` and,
    when given, T(k1, k2) ``qt``, and their leading eigenvalues."""
    return {"M": _curves(spec_m, q, ks, p.power), "logM": _curves(spec_l, q, ks, p.power),
            **({} if qt is None else
               {"paper_set": {"M": _curves(spec_m, qt, ks, p.power), "logM": _curves(spec_l, qt, ks, p.power)}}),
            "eigenvalues": {"M": spec_m.values[:3 * K + 2].tolist(), "logM": spec_l.values[:3 * K + 2].tolist()}}


def corpus_summary(counts, pairs: int) -> dict:
    import numpy as np

    C = counts.toarray() if hasattr(counts, "toarray") else np.asarray(counts)
    return {"pairs": int(pairs), "cooccurrences": float(C.sum()), "zero_cells": float((C == 0).mean())}


def model_curves(name, corpus, K, q, ks, p, qt=None) -> dict:
    """Exact and sampled curves of one corpus (a counts matrix and its truth.json), as the
    study computed them when it ran one seed; the stages call :func:`exact_curves` and
    :func:`sampled_curves` apart (benchmarks/attr_analogy/probes.py uses this one)."""
    pk, sk = _pk_sk(corpus.truth)
    out = {"exact": exact_curves(corpus.truth, K, q, ks, p, qt),
           "sampled": sampled_curves(corpus.counts, K, q, ks, p, qt),
           "corpus": {"p": pk.tolist(), "s": sk.tolist(), **corpus_summary(corpus.counts, corpus.truth["pairs"])}}
    return out


def control_exact(truth: dict, K: int, qt, p) -> dict:
    """The control's exact model: the attribute mixture of the same p_k, s_k
    (:func:`model.mixture_m`), M and log M, T(k1, k2) for k = 1..3K."""
    import numpy as np

    from . import model

    pk, sk = _pk_sk(truth)
    M = model.mixture_m(pk, sk)
    ks = list(range(1, 3 * K + 1))
    spec_m, spec_l = model.top_spectrum(M, 3 * K), model.top_spectrum(np.log(M), 3 * K)
    return {"ks": ks, "paper_set": {"M": _curves(spec_m, qt, ks, p.power), "logM": _curves(spec_l, qt, ks, p.power)},
            "M_rank": int(np.linalg.matrix_rank(M))}


def control_sampled(counts, K: int, qt, p) -> dict:
    """The control on one mixture corpus: M-hat and log M-hat (the same estimators and
    pseudocount as the model's corpora), T(k1, k2) for k = 1..3K."""
    from . import model

    ks = list(range(1, 3 * K + 1))
    M = model.m_from_counts(counts, p.pseudocount)
    spec_m, spec_l = model.top_spectrum(M, 3 * K), model.top_spectrum(model.log_of(M), 3 * K)
    return {"ks": ks, "paper_set": {"M": _curves(spec_m, qt, ks, p.power), "logM": _curves(spec_l, qt, ks, p.power)}}


def removal_ablation(corpus, K, q, p, fill=None, qt=None) -> dict:
    """Before/after accuracy per relation r: every co-occurrence of the pairs (i, i^r) removed.

    ``corpus``: its ``counts`` (dense or sparse) and ``truth["pairs"]``. Flip analogies of
    relation r (``q``); with ``qt`` (the paper's T(k1, k2) sets) also the T analogies that involve
    r (as k1 or k2), for M and log M after the corpus removal and for log M-hat with those cells
    set to 0 and nothing else changed (the paper's Sec. 9 removal, applied to the sampled matrix:
    ``pruned``).

    ``fill`` (None in the pipeline): a function (log M, mask of the removed cells) -> log M that
    replaces the removed cells' values after removal, for probes that treat them as missing data
    (benchmarks/attr_analogy/probes.py); None keeps them as counted zeros (smoothed by the
    pseudocount)."""
    import numpy as np
    from tqdm import tqdm

    from . import model

    ks = list(range(1, 3 * K + 1))
    dense = corpus.counts.toarray() if hasattr(corpus.counts, "toarray") else np.asarray(corpus.counts)

    def spectra(C, mask=None):
        M = model.m_from_counts(C, p.pseudocount)
        L = model.log_of(M) if mask is None else fill(model.log_of(M), mask)
        return {"M": model.top_spectrum(M, 3 * K), "logM": model.top_spectrum(L, 3 * K)}, L

    before, L_before = spectra(dense)
    if qt is not None:       # every T analogy scored once before removal; subsets read off below
        t_before = {mat: model.hits_by_k_multi(before[mat], qt, ks, p.power, SCORINGS) for mat in ("M", "logM")}
    rows = []
    for r in tqdm(p.removal_relations, desc="pair removal", mininterval=10):
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
                "before": {mat: {sc: t_before[mat][sc][:, inv].mean(1).tolist() for sc in SCORINGS}
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

    pk, sk = _pk_sk(corpus.truth)
    ks = list(range(1, 3 * K + 1))
    L = np.log(model.dense_m(pk, sk))
    strongest, weakest = model.strongest_weakest(pk, sk)
    hits_before = model.hits_by_k_multi(model.exact_logm_spectrum(pk, sk), qt, ks, p.power, SCORINGS)
    out = {"ks": ks, "strongest": strongest, "weakest": weakest, "pruned": {}}
    for label, r in (("strongest", strongest), ("weakest", weakest)):
        inv = qt.involves(r)
        spec = model.top_spectrum(model.prune_relation_logm(L, K, r), 3 * K)
        hits_after = model.hits_by_k_multi(spec, qt, ks, p.power, SCORINGS)
        entry = {"relation": r, "n_involving": int(inv.sum()), "n_other": int((~inv).sum())}
        for when, hits in (("before", hits_before), ("after", hits_after)):
            entry[when] = {"involving": {sc: h[:, inv].mean(1).tolist() for sc, h in hits.items()},
                           "other": {sc: h[:, ~inv].mean(1).tolist() for sc, h in hits.items()}}
        out["pruned"][label] = entry
    return out


def noise_sweep(corpus, K, p, seed) -> dict:
    """Accuracy at k = K+1 and 2K under log-normal noise, pruning and finite corpora, drawn from
    ``seed``'s streams (a verdict seed: one repetition of the sweep)."""
    import numpy as np

    from . import model

    pk, sk = _pk_sk(corpus.truth)
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
    for sigma in p.noise.sigmas:
        out["sigma"].append({"level": sigma, **measure(model.m_from_counts(model.lognormal_noise(P, sigma, rng)), q_all)})
    rng = np.random.default_rng([seed, RNG_PRUNE])
    for keep in p.noise.keep:
        words = np.sort(rng.choice(V, size=max(4, round(keep * V)), replace=False))
        q = model.flip_analogies(K, n_q, rng, words=words)
        out["keep"].append({"level": keep, "words": len(words), "n_analogies": len(q),
                            **measure(model.m_from_counts(P[np.ix_(words, words)]), _remap(q, words))})
    rng = np.random.default_rng([seed, RNG_PAIRS])
    for pairs in p.noise.pairs:
        C = model.sample_counts(P, pairs, rng)
        out["pairs"].append({"level": pairs, "zero_cells": float((C == 0).mean()),
                             **measure(model.m_from_counts(C, p.pseudocount), q_all)})
    return out


def realtext(ctx, p) -> dict:
    import numpy as np

    from stages.common.corpora import corpus_path, load_analogy_table

    from . import model
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
        hits = [model.predict_hits_multi(spec.embedding(k, p.power), q, SCORINGS) for k in ks]
        out[mat] = {sc: [int(h[sc].sum()) for h in hits] for sc in SCORINGS}
    return out


def _progress(what: str, t0: float) -> None:
    import time

    print(f"    {what} ({time.perf_counter() - t0:.1f}s)", flush=True)


def shared_run(truths: dict, K: int, q, qt, ks, p, ctx=None) -> dict:
    """Everything that does not depend on the verdict seed (run once): the exact models' curves,
    the control's exact mixture, the paper's removal on the exact model and, with ``ctx``, real
    text."""
    import time
    from types import SimpleNamespace

    t0 = time.perf_counter()
    out = {"spreads": {}, "control": {}, "removal_exact": {}}
    for name in p.spreads:
        out["spreads"][name] = {"exact": exact_curves(truths[name], K, q, ks, p, qt)}
        out["control"][name] = {"exact": control_exact(truths[name], K, qt, p)}
        _progress(f"exact model and exact mixture, {name}", t0)
        out["removal_exact"][name] = removal_exact(SimpleNamespace(truth=truths[name]), K, qt, p)
        _progress(f"paper's removal on the exact model, {name}", t0)
    if ctx is not None:
        out["realtext"] = realtext(ctx, p)
        _progress("real text", t0)
    return out


def seed_counts(truth: dict, seed: int, stream: int, name: str):
    """A verdict seed's own corpus of one attribute corpus's model and size (``truth``): counts
    drawn from the exact joint (``stream`` RNG_CORPUS) or from the mixture of the same p_k, s_k
    (RNG_CONTROL), Poissonised (:func:`model.sample_counts`), dense (V, V)."""
    from stages.common.seeds import rng

    from . import model

    pk, sk = _pk_sk(truth)
    P = model.dense_joint(pk, sk) if stream == RNG_CORPUS else model.mixture_joint(pk, sk)
    return model.sample_counts(P, int(truth["pairs"]), rng(seed, stream, corpus_stream(name)))


def seed_run(seed: int, truths: dict, K: int, q, qt, ks, p) -> dict:
    """One verdict seed's repetition: its own corpora (the spreads and the removal corpus) and
    mixture corpora, their curves, the pair-removal ablation and the noise sweep."""
    from types import SimpleNamespace

    import time

    t0 = time.perf_counter()
    names = list(dict.fromkeys([*p.spreads, p.removal_corpus]))
    counts = {name: seed_counts(truths[name], seed, RNG_CORPUS, name) for name in names}
    out = {"spreads": {}, "control": {}}
    for name in p.spreads:
        C = counts[name]
        out["spreads"][name] = {"sampled": sampled_curves(C, K, q, ks, p, qt),
                                "corpus": corpus_summary(C, truths[name]["pairs"])}
        _progress(f"seed {seed}: sampled {name}", t0)
        Cm = seed_counts(truths[name], seed, RNG_CONTROL, name)
        out["control"][name] = {"sampled": control_sampled(Cm, K, qt, p),
                                "corpus": corpus_summary(Cm, truths[name]["pairs"])}
        _progress(f"seed {seed}: mixture (control) {name}", t0)
    small = SimpleNamespace(counts=counts[p.removal_corpus], truth=truths[p.removal_corpus])
    out["removal"] = removal_ablation(small, K, q, p, qt=qt)
    _progress(f"seed {seed}: pair removal on {p.removal_corpus}", t0)
    out["noise"] = noise_sweep(SimpleNamespace(truth=truths[p.noise.spread]), K, p, seed)
    _progress(f"seed {seed}: noise sweep", t0)
    return out


def read_truths(ctx, p) -> tuple[dict, int]:
    """The attribute model of every corpus the study names (truth.json: K, p_k, s_k, pairs),
    checked; (truths, K). The corpora's sampled counts are not used."""
    from stages.common.corpora import corpus_path

    from .data import read_counts

    names = list(dict.fromkeys([*p.spreads, p.removal_corpus]))
    corpora = {}
    for name in names:
        try:
            corpora[name] = read_counts(ctx.path(corpus_path("attributes", name)))
        except FileNotFoundError as err:
            fail(f"attr_analogy.train: corpus {name!r} (named in stages/attr_analogy/params.json) "
                 f"is not there: {err}; "
                 "add it to corpora.<profile>.attributes.corpora")
    K = check_corpora(corpora, p)
    return {name: dict(c.truth) for name, c in corpora.items()}, K


def main() -> None:
    with stage("attr_analogy", "train", AttrParams) as ctx:
        import time

        from stages.common.device import limit_threads

        limit_threads()
        from stages.common.io import write_json
        from stages.common.seeds import run_seeds

        p = ctx.params.train
        truths, K = read_truths(ctx, p)
        V = 2 ** K
        ks = list(range(1, p.k_max + 1)) + [k for k in p.k_extra if k <= V]
        q, qt = analogy_sets(K, p)
        t0 = time.perf_counter()
        shared = shared_run(truths, K, q, qt, ks, p, ctx)
        print(f"  shared (exact models, control's exact mixture, paper's removal, real text): "
              f"{time.perf_counter() - t0:.1f}s", flush=True)
        per_seed = run_seeds(ctx.seeds, lambda seed: seed_run(seed, truths, K, q, qt, ks, p), "verdict seed")

        results = {"K": K, "V": V, "ks": ks, "scorings": list(SCORINGS), "power": p.power,
                   "n_analogies": len(q), "n_paper_set": len(qt), "pair_base_words": p.pair_base_words,
                   "analogy_seed": p.analogy_seed, "saturation_corpus": p.saturation_corpus,
                   "spread_order": list(p.spreads), "seeds": list(per_seed),
                   "truth": {name: {k: truths[name][k] for k in ("marginal", "strength", "pairs")} for name in truths},
                   "shared": shared, "per_seed": {str(s): r for s, r in per_seed.items()}}
        write_json(ctx.path(RESULTS), results)

        i1, i2 = ks.index(K + 1), ks.index(2 * K)
        summary = {"K": K, "n_analogies": len(q), "n_paper_set": len(qt), "seeds": list(per_seed),
                   "realtext_covered": shared["realtext"]["covered"]}
        for name in p.spreads:
            for mat in ("M", "logM"):
                for label, curves in (("", shared["spreads"][name]["exact"]),
                                      ("paper_set.", shared["spreads"][name]["exact"]["paper_set"])):
                    summary[f"{label}exact.{name}.{mat}.acc_K1"] = curves[mat]["eq13"][i1]
                    summary[f"{label}exact.{name}.{mat}.acc_2K"] = curves[mat]["eq13"][i2]
                for seed, r in per_seed.items():
                    sa = r["spreads"][name]["sampled"]
                    summary[f"paper_set.sampled.{name}.{mat}.acc_K1.seed{seed}"] = sa["paper_set"][mat]["eq13"][i1]
                    ctx.run.log_curve(f"acc_paper_set.sampled.{name}.{mat}.eq13.seed{seed}",
                                      sa["paper_set"][mat]["eq13"], steps=ks)
        write_json(ctx.path(TRAIN_METRICS), summary)
        for name in p.spreads:
            ex = shared["spreads"][name]["exact"]
            lows = [min(r["spreads"][name]["sampled"]["logM"]["eq13"][i1:i2 + 1]) for r in per_seed.values()]
            print(f"  {name}: exact log M at K+1 = {ex['logM']['eq13'][i1]:.3f}, exact M at K+1 = "
                  f"{ex['M']['eq13'][i1]:.3f}; sampled log M, min over K+1..2K, per seed: "
                  + ", ".join(f"{v:.3f}" for v in lows))


if __name__ == "__main__":
    main()
