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


# ---- one verdict seed end to end (the train and evaluate stages run these for every seed of
# ctx.seeds; benchmarks/autosep/calibration.py and seeds.py call them with calibration seeds)

def train_seed(x: np.ndarray, y: np.ndarray, split: dict, train_p, seed: int, progress=None) -> dict:
    """Every prompt search of one seed (the main setting and the controls of ``settings``, on every
    repeat and group of ``split``): ``{"prompts": {setting: {"generic", "prompts"}}, "summary":
    {setting: {...}}, "curves": {setting: {method: mean best score by round}}}``. ``train_p`` is the
    profile's ``train`` params; ``progress(setting, repeat)`` is called after each repeat."""
    from .sim import GROUPS, Blackbox, prototypes

    unl = split["unlabelled"]
    pre = split["pretrain"]
    protos = prototypes(x[pre], y[pre])
    s = Search(**train_p.search.model_dump())
    out, summary, curves_out = {}, {}, {}
    for name, (bb_kw, rule, methods) in settings(train_p.blackbox.model_dump(), train_p.generic_rule,
                                                 train_p.ablations.finer_block,
                                                 train_p.ablations.blind_compare_noise).items():
        bb = Blackbox(protos, **bb_kw)
        gen = generic_prompt(x[pre], s.m, rule)
        prompts = {m: [] for m in methods}
        curves = {m: [] for m in methods}
        scores = {m: [] for m in methods}
        pseudo_acc = []
        for r in range(unl.shape[0]):
            row = {m: [] for m in methods}
            for g, classes in enumerate(GROUPS):
                res = search_group(bb, x[unl[r, g]], y[unl[r, g]], classes, gen, s, group_seed(seed, r, g), methods)
                for m in methods:
                    row[m].append(list(res["prompts"][m]))
                    curves[m].append(res["curves"][m])
                    scores[m].append(res["instance_score"][m])
                pseudo_acc.append(float(np.mean(res["pseudo_labels"] == y[unl[r, g]])))
            for m in methods:
                prompts[m].append(row[m])
            if progress is not None:
                progress(name, r)
        out[name] = {"generic": list(gen), "prompts": prompts}
        summary[name] = {"instance_score": {m: float(np.mean(v)) for m, v in scores.items()},
                         "majority_vote_pseudo_label_accuracy": float(np.mean(pseudo_acc))}
        curves_out[name] = {m: np.mean(curves[m], axis=0).tolist() for m in methods}
    return {"prompts": out, "summary": summary, "curves": curves_out}


def gains(acc: dict, rho: float) -> dict:
    """The claims' figures from one setting's accuracies (fractions): gains in percentage points,
    and the best unsupervised baseline (of ``UNSUPERVISED`` present in ``acc``)."""
    out = {"rho": rho}
    a = acc["autosep"]
    for ref, key in (("zero_shot", "gain_zero_shot_pp"), ("generic", "gain_generic_pp"),
                     ("random_score", "gain_random_score_pp"), ("true_label", "gap_true_label_pp")):
        if ref in acc:
            out[key] = 100 * (a - acc[ref])
    present = [m for m in UNSUPERVISED if m in acc]
    best = max(present, key=lambda m: acc[m])
    out["best_baseline"], out["best_baseline_accuracy"] = best, acc[best]
    out["gain_best_baseline_pp"] = 100 * (a - acc[best])
    return out


def evaluate_seed(x: np.ndarray, y: np.ndarray, split: dict, found: dict, train_p, n_random: int, seed: int,
                  progress=None) -> dict:
    """One seed's figures: per setting (main and the controls of ``settings``) every method's test
    accuracy (mean over the groups and repeats of ``split``) and the claims' gains; plus, under
    ``controls``, the arms with AutoSEP's contribution taken out, judged as the musts judge AutoSEP:
    ``generic_arm`` (the un-optimised description prompt: no unlabelled data, no search) and
    ``random_score_arm`` (the same search and edits, ranked by a random score: no instance score)."""
    from .sim import GROUPS, Blackbox, prototypes

    unl, test, pre = split["unlabelled"], split["test"], split["pretrain"]
    protos = prototypes(x[pre], y[pre])
    s = Search(**train_p.search.model_dump())
    blocks = {}
    for name, (bb_kw, _rule, methods) in settings(train_p.blackbox.model_dump(), train_p.generic_rule,
                                                  train_p.ablations.finer_block,
                                                  train_p.ablations.blind_compare_noise).items():
        if name not in found or any(m not in found[name]["prompts"] for m in methods):
            raise KeyError(f"the prompts lack the setting {name!r} or one of its methods {methods}")
        bb = Blackbox(protos, **bb_kw)
        gen = tuple(found[name]["generic"])
        cells = []
        for r in range(unl.shape[0]):
            for g, classes in enumerate(GROUPS):
                prompts = {m: tuple(found[name]["prompts"][m][r][g]) for m in methods}
                cells.append((r, g, evaluate_group(bb, x[unl[r, g]], x[test[r, g]], y[test[r, g]], classes,
                                                   prompts, gen, s, group_seed(seed, r, g), n_random,
                                                   baselines=name == "main")))
            if progress is not None:
                progress(name, r)
        keys = list(cells[0][2]["accuracy"])
        acc = {k: float(np.mean([c[2]["accuracy"][k] for c in cells])) for k in keys}
        block = {"accuracy": acc, **gains(acc, float(np.mean([c[2]["rho"] for c in cells])))}
        block["per_group_gain_zero_shot_pp"] = [
            100 * float(np.mean([c[2]["accuracy"]["autosep"] - c[2]["accuracy"]["zero_shot"] for c in cells if c[1] == g]))
            for g in range(len(GROUPS))]
        blocks[name] = block
    main = blocks.pop("main")
    a = main["accuracy"]
    controls = dict(blocks)
    controls["generic_arm"] = {"gain_zero_shot_pp": 100 * (a["generic"] - a["zero_shot"])}
    controls["random_score_arm"] = {"gain_generic_pp": 100 * (a["random_score"] - a["generic"]),
                                    "gain_best_baseline_pp": 100 * (a["random_score"] - main["best_baseline_accuracy"])}
    return {**main, "controls": controls}
