"""The experiment of one fine-grained group: the prompts each method finds on the unlabelled images
(``search_group``), and their test accuracies and the score/accuracy correlation
(``evaluate_group``). The train and evaluate stages and the calibration script call these."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .sim import (Blackbox, beam_search, comparison_pairs, instance_score, kmeans_labels, label_edits,
                  label_score, majority_vote, pair_edits, random_prompt)

# every method that searches a prompt, in the order the reports list them
SEARCHED = ("autosep", "random_score", "opt_majority_vote", "opt_random_labels", "true_label")
# the unsupervised baselines (no labels, no random score), of which the best is "the best baseline"
UNSUPERVISED = ("generic", "majority_vote", "kmeans", "random_prompt", "opt_majority_vote", "opt_random_labels")


@dataclass(frozen=True)
class Search:
    """The search's sizes (AutoSEP's: rounds 6, beam 4, minibatch 50, 4 gradients, 1 paraphrase)."""
    m: int = 12
    rounds: int = 6
    beam: int = 4
    n_grad: int = 4
    paraphrases: int = 1
    minibatch: int = 50
    max_expand: int = 5
    pairs_per_image: int = 2
    label_edit: str = "prototype"
    votes: int = 5
    vote_noise: float = 0.05
    kmeans_k: int = 7


def generic_prompt(x_pretrain: np.ndarray, m: int, rule: str = "ink") -> tuple[int, ...]:
    """The generic description prompt ("describe the salient parts"): the ``m`` pixels with the most
    mean ink over all pre-training digits (``rule="ink"``), or the most varying ones (``"variance"``)."""
    stat = {"ink": x_pretrain.mean(0), "variance": x_pretrain.var(0)}.get(rule)
    if stat is None:
        raise ValueError(f"generic_prompt: rule must be 'ink' or 'variance', got {rule!r}")
    return tuple(sorted(int(p) for p in np.argsort(-stat, kind="stable")[:m]))


def _seed(seed: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng([seed, *keys])


def search_group(bb: Blackbox, x_unl: np.ndarray, y_unl: np.ndarray, classes, generic, s: Search, seed: int,
                 methods=SEARCHED) -> dict:
    """The prompt each searched method finds on the unlabelled images ``x_unl`` (``y_unl`` is read
    by the true-label reference only), its search curve, and the majority-vote pseudo-labels."""
    classes = tuple(classes)
    pairs = comparison_pairs(len(x_unl), s.pairs_per_image, _seed(seed, 1))
    score_seed = int(_seed(seed, 2).integers(2**31))
    inst = lambda p: instance_score(bb, x_unl, p, pairs, score_seed)           # noqa: E731
    rand_score = lambda p: float(np.random.default_rng([seed, 3, *p]).random())  # noqa: E731 - a fixed random score per prompt
    pseudo = majority_vote(bb, x_unl, classes, s.votes, s.vote_noise, _seed(seed, 4))
    random_labels = _seed(seed, 5).choice(classes, size=len(x_unl))
    by_labels = {"opt_majority_vote": pseudo, "opt_random_labels": random_labels, "true_label": y_unl}
    out = {"prompts": {}, "curves": {}, "pseudo_labels": pseudo}
    kw = dict(rounds=s.rounds, beam=s.beam, paraphrases=s.paraphrases, max_expand=s.max_expand)
    for k, name in enumerate(methods):
        rng = _seed(seed, 10 + k)
        if name in ("autosep", "random_score"):
            edits = lambda p, r: pair_edits(bb, x_unl, p, s.n_grad, s.minibatch, r)   # noqa: E731
            score = inst if name == "autosep" else rand_score
        elif name in by_labels:
            labels = by_labels[name]
            edits = (lambda lab: lambda p, r: label_edits(bb, x_unl, p, lab, classes, s.label_edit, s.n_grad,
                                                          s.minibatch, r))(labels)
            score = (lambda lab: lambda p: label_score(bb, x_unl, p, lab, classes, score_seed))(labels)
        else:
            raise ValueError(f"search_group: unknown method {name!r}; known: {', '.join(SEARCHED)}")
        best, curve = beam_search(tuple(generic), score, edits, rng=rng, **kw)
        out["prompts"][name], out["curves"][name] = best, curve
    out["instance_score"] = {name: inst(p) for name, p in out["prompts"].items()}
    return out


def evaluate_group(bb: Blackbox, x_unl: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, classes, prompts: dict,
                   generic, s: Search, seed: int, n_random: int = 30, baselines: bool = True) -> dict:
    """Test accuracy of every method (searched prompts, zero-shot, generic description, majority
    vote, k-means, a random prompt), and Spearman's rho between the instance score on the
    unlabelled images and the test accuracy over ``n_random`` random prompts + generic + AutoSEP.
    ``baselines=False`` skips majority vote and k-means (the controls need neither)."""
    from scipy.stats import spearmanr

    classes = tuple(classes)
    test_seed = int(_seed(seed, 6).integers(2**31))
    acc = lambda p: float(np.mean(bb.classify(x_test, p, classes, np.random.default_rng(test_seed)) == y_test))  # noqa: E731
    res = {name: acc(p) for name, p in prompts.items()}
    res["zero_shot"] = acc(())
    res["generic"] = acc(tuple(generic))
    if baselines:
        res["majority_vote"] = float(np.mean(majority_vote(bb, x_test, classes, s.votes, s.vote_noise,
                                                           _seed(seed, 7)) == y_test))
        res["kmeans"] = float(np.mean(kmeans_labels(bb, x_unl, x_test, classes, s.kmeans_k, seed)[1] == y_test))
    rng = _seed(seed, 8)
    randoms = [random_prompt(s.m, rng) for _ in range(n_random)]
    res["random_prompt"] = acc(randoms[0])
    pairs = comparison_pairs(len(x_unl), s.pairs_per_image, _seed(seed, 1))
    score_seed = int(_seed(seed, 2).integers(2**31))
    pool = randoms + [tuple(generic)] + ([prompts["autosep"]] if "autosep" in prompts else [])
    sc = [instance_score(bb, x_unl, p, pairs, score_seed) for p in pool]
    ac = [acc(p) for p in pool]
    rho = spearmanr(sc, ac).statistic
    return {"accuracy": res, "rho": float(rho) if np.isfinite(rho) else 0.0}


def settings(blackbox: dict, generic_rule: str, finer_block: int, blind_compare_noise: float) -> dict:
    """The main setting and the three controls, each ``(black-box kwargs, generic rule, methods)``:
    ``finer_look`` (the model already sees detail: nothing to gain over zero-shot), ``strong_generic``
    (the generic prompt names the most varying pixels: nothing to gain over it) and ``blind_score``
    (comparisons so noisy that the instance score sees nothing: no better than a random score)."""
    return {
        "main": (dict(blackbox), generic_rule, SEARCHED),
        "finer_look": ({**blackbox, "block": finer_block}, generic_rule, ("autosep",)),
        "strong_generic": (dict(blackbox), "variance", ("autosep",)),
        "blind_score": ({**blackbox, "compare_noise": blind_compare_noise}, generic_rule, ("autosep", "random_score")),
    }


def group_seed(seed: int, repeat: int, group: int) -> int:
    """The seed of one (repeat, group) cell: the same in the train and evaluate stages."""
    return int(np.random.default_rng([seed, 7, repeat, group]).integers(2**31))
