"""zipf_bigram prepare: synthetic Zipf bigram corpora and real-text bigram counts.

Outputs (Hugging Face datasets saved to disk): data/zipf_bigram/stats, .../pairs,
.../realtext; the generator check in reports/zipf_bigram/prepare.json.

The frequency spectra (pi, q) and the real-text table do not depend on the seed: made once. What
each verdict seed draws: the per-row permutations of the conditionals (a permutation seed per
verdict seed and (alpha, d), stored in ``stats`` as ``perm_seeds``, in the order of ``seeds``)
and the sampled corpora (``pairs``, a ``seed`` column), whose fitted exponents are the generator
check of each seed (``per_seed`` in prepare.json).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import ZipfParams
from .paths import PAIRS, PREPARE_METRICS, REALTEXT, STATS


def main() -> None:
    with stage("zipf_bigram", "prepare", ZipfParams) as ctx:
        import datasets
        import numpy as np
        from tqdm import tqdm

        from stages.common.io import atomic_dir, write_json
        from stages.common.seeds import per_seed_metrics

        from . import data

        p = ctx.params.prepare
        seeds = ctx.seeds
        rows = {"alpha": [], "log2_d": [], "d": [], "pi": [], "q": [], "perm_seeds": []}
        for alpha, k, pi, q in tqdm(list(data.exact_spectra(p.alphas, p.log2_ds)), desc="spectra"):
            rows["alpha"].append(alpha); rows["log2_d"].append(k); rows["d"].append(2 ** k)
            rows["pi"].append(pi); rows["q"].append(q)
            rows["perm_seeds"].append([data.perm_seed(s, alpha, k) for s in seeds])
        features = datasets.Features({
            "alpha": datasets.Value("float64"), "log2_d": datasets.Value("int32"),
            "d": datasets.Value("int64"), "pi": datasets.Sequence(datasets.Value("float64")),
            "q": datasets.Sequence(datasets.Value("float64")),
            "perm_seeds": datasets.Sequence(datasets.Value("int64"))})
        with atomic_dir(ctx.path(STATS)) as tmp:
            datasets.Dataset.from_dict(rows, features=features).save_to_disk(str(tmp))

        per_seed: dict[int, dict] = {s: {} for s in seeds}
        pair_cols = {"seed": [], "alpha": [], "x": [], "y": [], "k": []}
        d = 2 ** p.corpus_log2_d
        for alpha in tqdm(p.alphas, desc="sampling corpora (every verdict seed)"):
            pi = data.power_law(d, alpha)
            key = f"alpha_{alpha:g}".replace(".", "p")
            for s in seeds:
                x, y, k = data.sample_pairs(pi, pi, p.corpus_pairs, seed=s,
                                            permutation_seed=data.perm_seed(s, alpha, p.corpus_log2_d))
                pair_cols["seed"].extend([s] * len(x)); pair_cols["alpha"].extend([alpha] * len(x))
                pair_cols["x"].extend(x.tolist()); pair_cols["y"].extend(y.tolist())
                pair_cols["k"].extend(k.tolist())
                per_seed[s][key] = {"fitted_alpha_marginal": data.fitted_exponent(x),
                                    "fitted_alpha_conditional": data.fitted_exponent(k)}
        with atomic_dir(ctx.path(PAIRS)) as tmp:
            datasets.Dataset.from_dict(pair_cols, features=datasets.Features({
                "seed": datasets.Value("int32"), "alpha": datasets.Value("float64"),
                "x": datasets.Value("int32"), "y": datasets.Value("int32"),
                "k": datasets.Value("int32")})).save_to_disk(str(tmp))

        vocab, freqs, counts, n_words = data.realtext_bigrams(data.lee_corpus_path(), p.realtext_vocab)
        (xs, ys), cs = zip(*counts.keys()), list(counts.values())
        with atomic_dir(ctx.path(REALTEXT)) as tmp:
            datasets.DatasetDict({
                "bigrams": datasets.Dataset.from_dict({"x": list(xs), "y": list(ys), "count": cs}),
                "vocab": datasets.Dataset.from_dict({"id": list(range(len(vocab))), "token": vocab,
                                                     "count": freqs}),
            }).save_to_disk(str(tmp))
        realtext = {"words": n_words, "vocab": len(vocab), "bigram_tokens": sum(cs),
                    "distinct_bigrams": len(cs),
                    "fitted_alpha_unigram": data.fitted_exponent(np.repeat(np.arange(len(freqs)), freqs))}
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(per_seed, realtext=realtext))
        print(f"  corpora: {len(p.alphas)} alphas x {len(p.log2_ds)} sizes, seeds {seeds}; real text "
              f"{n_words} words, {len(cs)} distinct bigrams in a {len(vocab)}-word vocabulary")


if __name__ == "__main__":
    main()
