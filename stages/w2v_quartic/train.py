"""w2v_quartic train: for every verdict seed (``ctx.seeds``) and each corpus role (dynamics,
downstream, downstream_rich, realtext), train full-batch SGNS and its quartic approximation from
the same small init with the same step size and step count, recording sigma_k^2, the projections
onto M*'s eigenvectors and the subspace overlap over time; on the roles listed in
``word2vec_weights``, the same two losses with word2vec's own pair weights (prefixed ``w2v_``);
the control arm (the plain factorisation of P - P_i P_j, ``draws.plain_factorisation``); then
gensim's Word2Vec on the same tokens, once per gensim seed.

Seeds (claims contract v2, docs/VERDICTS.md): each verdict seed samples its own topic corpora
from the shared corpora's generative model and sizes (``draws.sample_corpus``); real text is one
fixed text (data/corpora/realtext), where only the init and gensim's seeds depend on the seed.
The seeds run one after another in this process (``stages.common.seeds.run_seeds``): batching
them as a seed dimension of the full-batch runs (``model.train`` takes one) was slower here
(benchmarks/w2v_quartic/seeds.py).

Outputs: data/w2v_quartic/runs/seed_<s>/<role>.npz (trajectories, final W, gensim embeddings,
M*'s spectrum, the kept words' truth) and reports/w2v_quartic/train.json (per seed: sizes, step
sizes, losses, timings).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import ROLES, W2VParams
from .paths import RUNS, TRAIN_METRICS, corpus_dir, seed_dir


def gensim_seed(seed: int, k: int) -> int:
    return seed * 1000 + k


def sentence_ids(corpus) -> list:
    """The corpus's sentences as word ids of its vocabulary (every word in place): a verdict
    seed's corpus in memory (``draws.SeedCorpus``) or a corpus folder's token file."""
    import numpy as np

    if hasattr(corpus, "sentence_ids"):
        return corpus.sentence_ids()
    index = corpus.index
    return [np.array([index[w] for w in line.split()], dtype=np.int64) for line in corpus.lines()]


def gensim_tokens(corpus):
    """What gensim trains on: the documents in memory, or a corpus folder's token file."""
    return corpus.token_sentences() if hasattr(corpus, "token_sentences") else corpus.tokens_path


def run_word2vec_weights(wp, gp, P_counts, u, W0, d: int, track: int, device) -> tuple[dict, dict]:
    """The quartic model (and SGNS) with word2vec's pair weights (``theory.word2vec_weights``):
    subsampling, negatives and their number as the gensim baseline, window weighted as
    ``wp.window_weighting``; from the same W0. Arrays are prefixed ``w2v_``."""
    import time

    import numpy as np
    import torch

    from . import model, theory

    P = P_counts / P_counts.sum()
    A, N = theory.word2vec_weights(P, u, gp.sample, gp.ns_exponent, gp.negative)
    target = model.Target.from_weights(A, N, device=device)
    spec = theory.spectrum((target.G * target.M).cpu().numpy(), track)
    eta = wp.lr_scale / spec.max_abs
    U = torch.as_tensor(spec.vectors, dtype=W0.dtype, device=device)
    arrays = {"w2v_eigvals": spec.values, "w2v_eta": np.array(eta)}
    summary = {"eta": eta, "steps": wp.steps, "window_weighting": wp.window_weighting,
               "eig_top_GM": spec.values[: d + 1].tolist(), "eig_min_GM": float(spec.values[-1]),
               "weight_range": [float(target.G.min()), float(target.G.max())],
               "seconds": {}, "final_loss": {}, "final_rel_grad": {}}
    for kind in wp.kinds:
        t0 = time.perf_counter()
        res = model.train(kind, target, W0, eta, wp.steps, wp.log_every, U, d, progress=True)
        summary["seconds"][kind] = time.perf_counter() - t0
        summary["final_loss"][kind] = float(res["loss"][-1])
        W = torch.as_tensor(res["W"], device=device)
        # convergence: |grad| relative to |G o M*| |W| (0 at a stationary point)
        rel = float(model.grad(kind, W, target).norm() / ((target.G * target.M).norm() * W.norm()))
        summary["final_rel_grad"][kind] = rel
        arrays[f"w2v_{kind}_rel_grad"] = np.array(rel)
        for k, v in res.items():
            arrays[f"w2v_{kind}_{k}"] = v
    return arrays, summary


def run_corpus(role: str, rp, gp, seed: int, corpus, device, wp=None) -> tuple[dict, dict]:
    """Everything the evaluate step needs about one corpus on one seed, and a summary.
    ``corpus``: the seed's own topic corpus (``draws.SeedCorpus``) or a corpus folder read back
    (``stages.common.corpora.Corpus``, real text)."""
    import time

    import numpy as np
    import torch

    from . import draws, model, theory
    from .baseline import gensim_embeddings

    keep = theory.keep_words(corpus.word_counts, rp.max_vocab)
    P, u = theory.cooccurrence_stats(corpus.counts, corpus.word_counts, keep)
    M = theory.target_matrix(P, u)
    V, d = len(keep), rp.dim
    if d > V:
        raise ValueError(f"{role}: dim ({d}) exceeds the vocabulary kept ({V})")
    spec = theory.spectrum(M, min(d + rp.track_extra, V))
    eta = theory.step_size(spec, rp.lr_scale)
    target = model.Target.build(P, u, device=device)
    W0 = model.init_weights(V, d, rp.init_scale, [seed, ROLES.index(role)], device=device)
    U = torch.as_tensor(spec.vectors, dtype=W0.dtype, device=device)
    arrays = {"keep": keep, "eigvals": spec.values, "eigvecs": spec.vectors,
              "p0": ((U.T @ W0) ** 2).sum(1).cpu().numpy(), "eta": np.array(eta),
              "W0": W0.cpu().numpy(), "word_counts": np.asarray(corpus.word_counts)[keep],
              "zero_cells_share": np.array(float((P == 0).mean())),
              "plain_E": draws.plain_factorisation(P, u, d)}
    for col in ("topic", "topic2"):
        if col in corpus.word_truth:
            arrays[col] = np.asarray(corpus.word_truth[col], dtype=np.int64)[keep]
    summary = {"vocab": V, "dim": d, "eta": eta, "steps": rp.steps,
               "corpus_seed": getattr(corpus, "seed", None),
               "eig_top": spec.values[: d + 1].tolist(), "eig_min": float(spec.values[-1]),
               "zero_cells_share": float((P == 0).mean()), "seconds": {}, "final_loss": {}}
    for kind in model.KINDS:
        t0 = time.perf_counter()
        res = model.train(kind, target, W0, eta, rp.steps, rp.log_every, U, d, progress=True)
        summary["seconds"][kind] = time.perf_counter() - t0
        summary["final_loss"][kind] = float(res["loss"][-1])
        for k, v in res.items():
            arrays[f"{kind}_{k}"] = v
    vocab = [corpus.vocab[i] for i in keep]
    window = int(corpus.truth["window"])
    if wp is not None and role in wp.roles:
        counts = theory.weighted_window_counts(sentence_ids(corpus), keep, len(corpus.vocab), window,
                                               wp.window_weighting)
        w2v_arrays, summary["word2vec_weights"] = run_word2vec_weights(
            wp, gp, counts, u, W0, d, min(d + rp.track_extra, V), device)
        arrays.update(w2v_arrays)
    embeds, secs = [], []
    tokens = gensim_tokens(corpus)
    for k in range(rp.gensim_seeds):
        E, s = gensim_embeddings(tokens, vocab, d, window, gensim_seed(seed, k), gp)
        embeds.append(E)
        secs.append(s)
    arrays["gensim_E"] = np.stack(embeds)
    arrays["gensim_seeds"] = np.array([gensim_seed(seed, k) for k in range(rp.gensim_seeds)])
    summary["seconds"]["gensim_per_seed"] = float(np.mean(secs))
    summary["gensim_window"] = window
    return arrays, summary


def role_corpus(role: str, rp, seed: int, specs: dict, fixed: dict):
    """The corpus of ``role`` on ``seed``: the seed's own sample of the topic corpus, or the
    fixed real text (read once into ``fixed``)."""
    from . import draws

    if rp.source == "realtext":
        return fixed[role]
    if rp.corpus not in specs:
        raise ValueError(f"{role}: no topic corpus {rp.corpus!r} in corpora params (have {sorted(specs)})")
    return draws.sample_corpus(specs[rp.corpus], seed)


def run_seed(seed: int, p, specs: dict, fixed: dict, device, out_dir, log=None) -> dict:
    """Every role on one verdict seed; writes ``out_dir/<role>.npz`` and returns the summaries."""
    import time

    from stages.common.io import write_npz

    summary = {}
    for role in ROLES:
        rp = getattr(p, role)
        t0 = time.perf_counter()
        corpus = role_corpus(role, rp, seed, specs, fixed)
        t_corpus = time.perf_counter() - t0
        arrays, s = run_corpus(role, rp, p.gensim, seed, corpus, device, p.word2vec_weights)
        s["seconds"]["corpus"] = t_corpus
        write_npz(out_dir / f"{role}.npz", arrays)
        summary[role] = s
        if log is not None:
            log(seed, role, arrays)
        print(f"  seed {seed} {role}: V={s['vocab']} d={s['dim']} eta={s['eta']:.3g} "
              f"final loss quartic={s['final_loss']['quartic']:.4g} sgns={s['final_loss']['sgns']:.4g} "
              f"(corpus {t_corpus:.1f}s, {s['seconds']['quartic']:.1f}s, {s['seconds']['sgns']:.1f}s; gensim "
              f"{s['seconds']['gensim_per_seed']:.1f}s/run)", flush=True)
        if "word2vec_weights" in s:
            w = s["word2vec_weights"]
            print(f"  seed {seed} {role}, word2vec weights: eta={w['eta']:.3g} steps={w['steps']} final loss "
                  + ", ".join(f"{k}={v:.4g} (rel. grad {w['final_rel_grad'][k]:.1e}, "
                              f"{w['seconds'][k]:.1f}s)" for k, v in w["final_loss"].items()), flush=True)
    return summary


def main() -> None:
    with stage("w2v_quartic", "train", W2VParams) as ctx:
        from stages.common.corpora import load_corpus
        from stages.common.device import limit_threads, select_device
        from stages.common.io import atomic_dir, write_json
        from stages.common.seeds import run_seeds

        from . import draws

        p = ctx.params.train
        device = select_device(ctx.common.device)
        summary = {"device": str(device), "torch_threads": limit_threads(), "seeds": list(ctx.seeds)}
        specs = draws.topic_specs(ctx.common.profile, ctx.root)
        fixed = {role: load_corpus(ctx.path(corpus_dir(getattr(p, role)))) for role in ROLES
                 if getattr(p, role).source == "realtext"}

        def log(seed, role, arrays):
            for kind in ("quartic", "sgns", "w2v_quartic", "w2v_sgns"):
                if f"{kind}_loss" in arrays:
                    ctx.run.log_curve(f"seed{seed}.{role}.{kind}.loss", arrays[f"{kind}_loss"],
                                      arrays[f"{kind}_step"])
                    ctx.run.log_curve(f"seed{seed}.{role}.{kind}.overlap", arrays[f"{kind}_overlap"],
                                      arrays[f"{kind}_step"])

        with atomic_dir(ctx.path(RUNS)) as tmp:
            def one(seed: int) -> dict:
                out = tmp / seed_dir(seed)
                out.mkdir()
                return run_seed(seed, p, specs, fixed, device, out, log)

            per_seed = run_seeds(ctx.seeds, one, what="verdict seed")
        summary["per_seed"] = {str(s): v for s, v in per_seed.items()}
        write_json(ctx.path(TRAIN_METRICS), summary)


if __name__ == "__main__":
    main()
