"""zipf_bigram prepare: synthetic Zipf bigram corpora and real-text bigram counts.

Outputs (Hugging Face datasets saved to disk): data/zipf_bigram/stats, .../pairs,
.../realtext; the generator check in reports/zipf_bigram/prepare.json.
"""
from __future__ import annotations

from stages.common.stage import stage

from .params import ZipfParams

STATS, PAIRS, REALTEXT = "data/zipf_bigram/stats", "data/zipf_bigram/pairs", "data/zipf_bigram/realtext"
METRICS = "reports/zipf_bigram/prepare.json"


def main() -> None:
    with stage("zipf_bigram", "prepare", ZipfParams) as ctx:
        import datasets
        import numpy as np
        from tqdm import tqdm

        from stages.common.io import atomic_dir, write_json

        from . import data

        p = ctx.params.prepare
        rows = {"alpha": [], "log2_d": [], "d": [], "pi": [], "q": [], "perm_seed": []}
        for alpha, k, pi, q in tqdm(list(data.exact_spectra(p.alphas, p.log2_ds)), desc="spectra"):
            rows["alpha"].append(alpha); rows["log2_d"].append(k); rows["d"].append(2 ** k)
            rows["pi"].append(pi); rows["q"].append(q)
            rows["perm_seed"].append(data.perm_seed(ctx.seed, alpha, k))
        features = datasets.Features({
            "alpha": datasets.Value("float64"), "log2_d": datasets.Value("int32"),
            "d": datasets.Value("int64"), "pi": datasets.Sequence(datasets.Value("float64")),
            "q": datasets.Sequence(datasets.Value("float64")), "perm_seed": datasets.Value("int64")})
        with atomic_dir(ctx.path(STATS)) as tmp:
            datasets.Dataset.from_dict(rows, features=features).save_to_disk(str(tmp))

        check = {}
        pair_cols = {"alpha": [], "x": [], "y": [], "k": []}
        d = 2 ** p.corpus_log2_d
        for alpha in tqdm(p.alphas, desc="sampling corpora"):
            pi = data.power_law(d, alpha)
            x, y, k = data.sample_pairs(pi, pi, p.corpus_pairs, seed=ctx.seed,
                                        permutation_seed=data.perm_seed(ctx.seed, alpha, p.corpus_log2_d))
            pair_cols["alpha"].extend([alpha] * len(x)); pair_cols["x"].extend(x.tolist())
            pair_cols["y"].extend(y.tolist()); pair_cols["k"].extend(k.tolist())
            key = f"alpha_{alpha:g}".replace(".", "p")
            check[key] = {"fitted_alpha_marginal": data.fitted_exponent(x),
                          "fitted_alpha_conditional": data.fitted_exponent(k)}
        with atomic_dir(ctx.path(PAIRS)) as tmp:
            datasets.Dataset.from_dict(pair_cols, features=datasets.Features({
                "alpha": datasets.Value("float64"), "x": datasets.Value("int32"),
                "y": datasets.Value("int32"), "k": datasets.Value("int32")})).save_to_disk(str(tmp))

        vocab, freqs, counts, n_words = data.realtext_bigrams(data.lee_corpus_path(), p.realtext_vocab)
        (xs, ys), cs = zip(*counts.keys()), list(counts.values())
        with atomic_dir(ctx.path(REALTEXT)) as tmp:
            datasets.DatasetDict({
                "bigrams": datasets.Dataset.from_dict({"x": list(xs), "y": list(ys), "count": cs}),
                "vocab": datasets.Dataset.from_dict({"id": list(range(len(vocab))), "token": vocab,
                                                     "count": freqs}),
            }).save_to_disk(str(tmp))
        check["realtext"] = {"words": n_words, "vocab": len(vocab), "bigram_tokens": sum(cs),
                             "distinct_bigrams": len(cs),
                             "fitted_alpha_unigram": data.fitted_exponent(
                                 np.repeat(np.arange(len(freqs)), freqs))}
        write_json(ctx.path(METRICS), check)
        print(f"  corpora: {len(p.alphas)} alphas x {len(p.log2_ds)} sizes; real text "
              f"{n_words} words, {len(cs)} distinct bigrams in a {len(vocab)}-word vocabulary")


if __name__ == "__main__":
    main()
