"""autosep's black box and search against known answers: a library's pooling, hand-made cases,
and the behaviour the study relies on (own description wins without noise, a search finds a known
optimum, a random score carries no signal)."""
from __future__ import annotations

import numpy as np
import pytest

from stages.autosep.experiment import Search, evaluate_group, generic_prompt, search_group, settings
from stages.autosep.sim import (GROUPS, Blackbox, beam_search, comparison_pairs, instance_score, kmeans_labels,
                                label_edits, majority_vote, pool, prototypes, quantize, random_swap, swap)


@pytest.fixture(scope="module")
def digits():
    from stages.autosep.data import load

    return load()


@pytest.fixture(scope="module")
def bb(digits):
    x, y = digits
    return Blackbox(prototypes(x[::3], y[::3]))


def test_pool_matches_skimage_block_reduce():
    from skimage.measure import block_reduce

    x = np.random.default_rng(0).random((3, 64))
    for block in (1, 2, 4, 8):
        want = np.stack([block_reduce(img.reshape(8, 8), (block, block), np.mean).ravel() for img in x])
        np.testing.assert_allclose(pool(x, block), want)


def test_quantize_by_hand():
    np.testing.assert_allclose(quantize(np.array([-0.2, 0.1, 0.2, 0.5, 0.9, 1.4]), 4),
                               [0, 0, 1 / 3, 2 / 3, 1, 1])          # 0.5 * 3 = 1.5 rounds to 2 (even)


def test_prototypes_are_class_means():
    x = np.arange(4 * 64, dtype=float).reshape(4, 64)
    p = prototypes(x, np.array([0, 1, 0, 1]), n_classes=2)
    np.testing.assert_allclose(p, [(x[0] + x[2]) / 2, (x[1] + x[3]) / 2])


def test_comparison_pairs_never_pair_an_image_with_itself():
    pairs = comparison_pairs(5, 3, np.random.default_rng(0))
    assert pairs.shape == (15, 2) and np.all(pairs[:, 0] != pairs[:, 1])
    assert np.all(np.bincount(pairs[:, 0]) == 3)


def test_noiseless_comparison_always_picks_the_own_description(digits):
    x, y = digits
    bb0 = Blackbox(prototypes(x, y), read_noise=0.0, compare_noise=1e-9, levels=17)
    xs = x[:40]
    prompt = tuple(range(16, 28))
    pairs = comparison_pairs(len(xs), 2, np.random.default_rng(1))
    distinct = np.any(xs[pairs[:, 0]][:, prompt] != xs[pairs[:, 1]][:, prompt], axis=1)
    rng = np.random.default_rng(2)
    desc = bb0.describe(xs, prompt, rng)
    hits = bb0.compare(xs[pairs[:, 0]], desc[pairs[:, 0]], desc[pairs[:, 1]], prompt, rng)
    assert hits[distinct].all()                       # ties (identical readings) are a coin


def test_empty_prompt_is_nearest_coarse_prototype(bb, digits):
    x, _ = digits
    b0 = Blackbox(bb.prototypes, look_noise=0.0)
    pred = b0.classify(x[:50], (), (3, 5, 8, 9), np.random.default_rng(0))
    d = ((pool(x[:50], 4)[:, None] - pool(bb.prototypes[[3, 5, 8, 9]], 4)[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(pred, np.array([3, 5, 8, 9])[d.argmin(1)])


def test_majority_vote_without_noise_is_zero_shot(bb, digits):
    x, _ = digits
    b0 = Blackbox(bb.prototypes, look_noise=0.0)
    cls = (1, 4, 7, 9)
    np.testing.assert_array_equal(majority_vote(b0, x[:60], cls, 5, 0.0, np.random.default_rng(0)),
                                  b0.classify(x[:60], (), cls, np.random.default_rng(1)))


def test_beam_search_finds_a_known_optimum():
    target = tuple(range(10, 22))
    score = lambda p: len(set(p) & set(target))                               # noqa: E731

    def edits(p, rng):                        # one step towards the target, as a good gradient would
        out = [p for p in (random_swap(p, rng),)]
        wrong, missing = sorted(set(p) - set(target)), sorted(set(target) - set(p))
        if wrong:
            out.append(swap(p, wrong[0], missing[0]))
        return out

    best, curve = beam_search(tuple(range(40, 52)), score, edits, rounds=12, beam=2, rng=np.random.default_rng(0))
    assert best == target and curve[-1] == 12 and curve == sorted(curve)


def test_instance_score_is_a_function_of_the_prompt(bb, digits):
    x, _ = digits
    pairs = comparison_pairs(60, 2, np.random.default_rng(0))
    p = generic_prompt(x, 12)
    assert instance_score(bb, x[:60], p, pairs, 5) == instance_score(bb, x[:60], p, pairs, 5)


def test_generic_prompt_ink_rule(digits):
    x, _ = digits
    p = generic_prompt(x, 12, "ink")
    assert len(p) == 12 and min(x.mean(0)[list(p)]) >= np.sort(x.mean(0))[-12]


def test_kmeans_labels_are_group_classes(bb, digits):
    x, y = digits
    cls = GROUPS[0]
    sel = np.flatnonzero(np.isin(y, cls))
    unl, test = kmeans_labels(bb, x[sel[:80]], x[sel[80:160]], cls, 7, 0)
    assert set(unl) <= set(cls) and set(test) <= set(cls) and len(test) == 80


def test_search_and_evaluation_are_deterministic_and_sane(bb, digits):
    x, y = digits
    cls = GROUPS[1]
    sel = np.flatnonzero(np.isin(y, cls))
    unl, test = sel[:80], sel[80:280]
    s = Search(rounds=2, beam=2, n_grad=2)
    gen = generic_prompt(x, s.m)
    a = search_group(bb, x[unl], y[unl], cls, gen, s, 3)
    b = search_group(bb, x[unl], y[unl], cls, gen, s, 3)
    assert a["prompts"] == b["prompts"] and a["curves"] == b["curves"]
    assert all(len(p) == s.m for p in a["prompts"].values())
    assert a["curves"]["autosep"] == sorted(a["curves"]["autosep"])       # the beam keeps its best
    ev = evaluate_group(bb, x[unl], x[test], y[test], cls, a["prompts"], gen, s, 3, n_random=5)
    assert set(ev["accuracy"]) >= {"autosep", "zero_shot", "generic", "kmeans", "majority_vote", "random_prompt"}
    assert all(0 <= v <= 1 for v in ev["accuracy"].values()) and -1 <= ev["rho"] <= 1


def test_settings_name_the_controls():
    st = settings({"block": 4, "compare_noise": 0.6}, "ink", 2, 20.0)
    assert st["finer_look"][0]["block"] == 2 and st["blind_score"][0]["compare_noise"] == 20.0
    assert st["strong_generic"][1] == "variance" and "random_score" in st["blind_score"][2]


@pytest.mark.parametrize("call, message", [
    (lambda: pool(np.zeros((1, 64)), 3), "block must divide 8"),
    (lambda: quantize(np.zeros(2), 1), "levels must be >= 2"),
    (lambda: prototypes(np.zeros((2, 64)), np.array([0, 0]), 2), "no image of class [1]"),
    (lambda: comparison_pairs(1, 2, np.random.default_rng(0)), "needs at least 2 images"),
    (lambda: generic_prompt(np.zeros((2, 64)), 3, "loud"), "rule must be 'ink' or 'variance'"),
])
def test_bad_inputs_are_named(call, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        call()


def test_bad_label_edit_mode(bb, digits):
    x, y = digits
    with pytest.raises(ValueError, match="mode must be 'prototype' or 'pair'"):
        label_edits(bb, x[:20], tuple(range(12)), y[:20], GROUPS[0], "oracle", 2, 10, np.random.default_rng(0))


def test_split_refuses_too_many_unlabelled(digits):
    from stages.autosep.data import split

    _, y = digits
    with pytest.raises(ValueError, match="not more than n_unlabelled"):
        split(y, 0, 0.45, 120, 1)


def test_split_keeps_pretraining_unlabelled_and_test_disjoint(digits):
    from stages.autosep.data import split

    _, y = digits
    s = split(y, 0, 0.3, 10, 2)
    pre = set(s["pretrain"].tolist())
    for r in range(2):
        for g, cls in enumerate(GROUPS):
            unl, test = set(s["unlabelled"][r, g].tolist()), set(np.flatnonzero(s["test"][r, g]).tolist())
            assert not (pre & unl) and not (pre & test) and not (unl & test)
            assert set(y[list(unl | test)]) == set(cls) and len(unl) == 40
    assert not np.array_equal(s["unlabelled"][0], s["unlabelled"][1])


def test_edit_rules_by_hand():
    from stages.autosep.sim import _least_varying, _most_different

    rng = np.random.default_rng(0)
    a, b = np.zeros(64), np.zeros(64)
    a[[5, 9]], b[9] = 1.0, 0.2                       # pixel 5 differs by 1, pixel 9 by 0.8
    assert _most_different(a, b, (0, 1), rng) == 5
    assert _most_different(a, b, (5, 1), rng) == 9    # a described pixel is never added again
    desc = np.array([[0.0, 1.0, 0.5], [0.0, 0.0, 0.5], [0.0, 1.0, 0.6]])
    assert _least_varying(desc, (7, 8, 9), rng) == 7    # a constant column tells no image apart


def test_prototype_edits_add_the_pixel_that_tells_the_classes_apart():
    protos = np.zeros((10, 64))
    protos[3, 40] = 1.0                                # classes 3 and 5 differ only at pixel 40
    bb0 = Blackbox(protos, look_noise=0.0, read_noise=0.0)
    x = np.zeros((6, 64))
    x[:, 40] = 1.0                                     # every image is a 3; the model says 3
    prompt = tuple(range(12))                          # the prompt does not read pixel 40
    # labelled 5 (wrong pseudo-labels): every image is an error, and each edit adds pixel 40
    edits = label_edits(bb0, x, prompt, np.array([5] * 6), (3, 5), "prototype", 3, 6, np.random.default_rng(0))
    assert all(40 in e and len(e) == 12 for e in edits)
