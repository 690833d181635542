"""Scores: BLEU (sacrebleu) on identical corpora and a hand case; token / character error rate
by hand; exact match; the retrieval baseline's nearest neighbour."""
from __future__ import annotations

import math

import numpy as np
import pytest

from stages.autoopt.m1 import metrics as M


def test_identical_corpora_bleu_100():
    refs = ["x _ { 1 } + 2", "\\min _ { x } \\quad x _ { 1 } ^ { 2 }"]
    assert M.corpus_bleu(refs, refs) == pytest.approx(100.0)
    assert M.exact_match(refs, refs) == 1.0
    assert M.error_rate(refs, refs) == 0.0


def test_bleu_hand_case():
    """hyp 'a b c d' vs ref 'a b c e': 1- to 4-gram precisions 3/4, 2/3, 1/2 and 0/1, which
    sacrebleu's default 'exp' smoothing turns into 1/(2 * 1) = 1/2; no brevity penalty.
    BLEU = 100 * (3/4 * 2/3 * 1/2 * 1/2) ** (1/4) = 100 * 0.125 ** 0.25 = 59.46."""
    assert M.corpus_bleu(["a b c d"], ["a b c e"]) == pytest.approx(100 * 0.125 ** 0.25, abs=1e-9)


def test_bleu_brevity_penalty_hand_case():
    """hyp 'a b c d' vs ref 'a b c d e f': all precisions 1, BP = exp(1 - 6/4)."""
    assert M.corpus_bleu(["a b c d"], ["a b c d e f"]) == pytest.approx(100 * math.exp(1 - 6 / 4), abs=1e-9)


def test_token_and_char_error_rate_by_hand():
    # x _ { 1 } -> x _ { 2 }: one substitution in 5 tokens; plus one deletion in 3 tokens
    assert M.error_rate(["x _ { 2 }"], ["x _ { 1 }"], "token") == pytest.approx(1 / 5)
    assert M.error_rate(["x _ { 2 }", "a b"], ["x _ { 1 }", "a b c"], "token") == pytest.approx(2 / 8)
    # characters of "\\sin(x)" (7) vs "\\cos(x)": three substitutions (s->c, i->o, n->s)
    assert M.error_rate(["\\cos ( x )"], ["\\sin ( x )"], "char") == pytest.approx(3 / 7)
    assert M.exact_match(["x _ { 2 }", "a b"], ["x _ { 1 }", "a  b"]) == 0.5


def test_bad_inputs():
    with pytest.raises(ValueError, match="2 predictions for 1 references"):
        M.corpus_bleu(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="unit must be"):
        M.error_rate(["a"], ["a"], "word")
    with pytest.raises(ValueError, match="no references"):
        M.corpus_bleu([], [])


def test_nearest_neighbour():
    rng = np.random.default_rng(0)
    train = rng.random((50, 4, 6))
    query = train[[7, 3, 41]] + 1e-3 * rng.random((3, 4, 6))
    assert M.nearest(train, query, batch=2).tolist() == [7, 3, 41]
