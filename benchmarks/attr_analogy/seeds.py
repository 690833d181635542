"""attr_analogy: the verdict seeds batched against one after another, on calibration seeds.

    nice -n 10 python benchmarks/attr_analogy/seeds.py [--seeds 1000,1001,1002,1003,1004] [--profile default]

The train stage runs its verdict seeds one after another in one process
(``stages.common.seeds.run_seeds`` over ``train.seed_run``). Per seed its work is dense: a V x V
count matrix per corpus, M-hat and log M-hat, their eigendecompositions, and the analogy
scoring of the embeddings (models of no parameters: there is nothing to train in a batch). The
one part a seed dimension can batch is the eigendecomposition: numpy's ``eigh`` takes a stack
(S, V, V). This script times, in one process (process time, one thread), for the profile's
spreads (the attribute models and sizes of stages/corpora/params.json):

1. **one after another**: per seed, its corpus of each spread drawn, M-hat and log M-hat, each
   decomposed alone (``model.top_spectrum``), both analogy sets scored over the k sweep (what
   ``train.sampled_curves`` does);
2. **batched**: the same corpora, each spread's S matrices of M-hat (and of log M-hat)
   decomposed in one stacked call (``model.top_spectra``), then the same scoring per seed;

checks that every seed's curves are the same in both (bit for bit), and prints the ratio.
Then, per seed, the cost of drawing the largest corpus with the corpora stage's generator
(``stages.common.corpora.attributes.generate``: pair by pair) against the study's Poissonised
draw from the same joint (``model.sample_counts``: cell by cell), the way each verdict seed gets
its corpora. Calibration seeds only (>= 1000): the verdict seeds are never run here.

``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, seeds 1000, 1001.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.attr_analogy.calibration import truths_from_params  # noqa: E402
from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402


def main() -> None:
    ap = seed_parser(__doc__)
    a, seeds = parse_seeds(ap)

    import numpy as np

    from stages.attr_analogy import model
    from stages.attr_analogy.params import AttrParams
    from stages.attr_analogy.train import (
        RNG_CORPUS, check_corpora, analogy_sets, corpus_stream, sampled_curves, seed_counts, spectra_curves)
    from stages.common.corpora.attributes import AttributeCorpusParams, generate
    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study

    limit_threads()
    _, params = load_study("attr_analogy", AttrParams, profile=a.profile)
    p = params.train
    truths = truths_from_params(a.profile)
    from types import SimpleNamespace

    K = check_corpora({n: SimpleNamespace(truth=t) for n, t in truths.items()}, p)
    ks = list(range(1, p.k_max + 1)) + [k for k in p.k_extra if k <= 2 ** K]
    q, qt = analogy_sets(K, p)
    counts = {(s, name): seed_counts(truths[name], s, RNG_CORPUS, name) for s in seeds for name in p.spreads}
    print(f"profile {a.profile}: K = {K}, V = {2 ** K}, spreads {list(p.spreads)}, seeds {seeds}", flush=True)

    c0 = time.process_time()
    one = {(s, name): sampled_curves(counts[s, name], K, q, ks, p, qt) for s in seeds for name in p.spreads}
    t_one = time.process_time() - c0
    print(f"  one after another: {t_one:.2f} CPU s", flush=True)

    c0 = time.process_time()
    batched = {}
    for name in p.spreads:
        Ms = np.stack([model.m_from_counts(counts[s, name], p.pseudocount) for s in seeds])
        specs_m = model.top_spectra(Ms, max(ks))
        specs_l = model.top_spectra(np.stack([model.log_of(M) for M in Ms]), max(ks))
        for s, sm, sl in zip(seeds, specs_m, specs_l):
            batched[s, name] = spectra_curves(sm, sl, K, q, ks, p, qt)
    t_batch = time.process_time() - c0
    print(f"  batched eigh:      {t_batch:.2f} CPU s", flush=True)
    same = all(one[key] == batched[key] for key in one)
    print(f"  batched / one after another: {t_batch / t_one:.3f}; every seed's curves the same in both: {same}")

    big = max(truths, key=lambda n: truths[n]["pairs"])
    t = truths[big]
    cp = AttributeCorpusParams(name=big, attributes=K, marginal=[t["marginal"][0], t["marginal"][-1]],
                               strength=[t["strength"][0], t["strength"][-1]], pairs=t["pairs"])
    c0 = time.process_time()
    generate(cp, seeds[0])
    t_gen = time.process_time() - c0
    c0 = time.process_time()
    P = model.dense_joint(np.asarray(t["marginal"]), np.asarray(t["strength"]))
    model.sample_counts(P, t["pairs"], np.random.default_rng([seeds[0], corpus_stream(big)]))
    t_pois = time.process_time() - c0
    print(f"  drawing the {big} corpus ({t['pairs']:,d} pairs) per seed: generate {t_gen:.2f} CPU s, "
          f"Poissonised {t_pois:.3f} CPU s ({t_gen / max(t_pois, 1e-9):.0f}x)")
    if not same:
        raise SystemExit("the batched spectra changed a seed's curves")


if __name__ == "__main__":
    main()
