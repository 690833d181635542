"""LaTeX tokenizer: commands stay whole; canonical strings round-trip; bad input errors."""
from __future__ import annotations

import pytest

from stages.autoopt.tokenizer import Vocab, canonical, detokenize, tokenize


@pytest.mark.parametrize("latex, tokens", [
    (r"\min_{x} x_{1}^{2}", ["\\min", "_", "{", "x", "}", "x", "_", "{", "1", "}", "^", "{", "2", "}"]),
    (r"\frac{1}{2}\leq 10", ["\\frac", "{", "1", "}", "{", "2", "}", "\\leq", "1", "0"]),
    (r"\left\{ a \right. \\ \quad\mathbb{E}", ["\\left", "\\{", "a", "\\right", ".", "\\\\", "\\quad",
                                               "\\mathbb", "{", "E", "}"]),
    (r"\lfloor x \rfloor", ["\\lfloor", "x", "\\rfloor"]),
])
def test_hand_cases(latex, tokens):
    assert tokenize(latex) == tokens
    assert tokenize(detokenize(tokens)) == tokens          # the canonical form reads back the same


def test_canonical_is_idempotent_and_spacing_free():
    s = r"\min _ { x }   \quad x_{1}+\sin(x_{2})"
    c = canonical(s)
    assert c == r"\min _ { x } \quad x _ { 1 } + \sin ( x _ { 2 } )"
    assert canonical(c) == c


def test_bad_input():
    with pytest.raises(ValueError, match="lone backslash"):
        tokenize("x + \\")
    with pytest.raises(TypeError, match="needs a str"):
        tokenize(3)  # type: ignore[arg-type]


def test_vocab_encode_decode_and_unknown():
    v = Vocab.build(["x _ { 1 }", "\\min _ { x }"])
    assert v.tokens[:4] == ["<pad>", "<bos>", "<eos>", "<unk>"]
    ids = v.encode("\\min _ { x } x _ { 1 }")
    assert ids[0] == v.bos and ids[-1] == v.eos
    assert v.decode(ids) == "\\min _ { x } x _ { 1 }"
    assert v.decode(v.encode("\\max")) == "<unk>"
    assert len(v.encode("x _ { 1 }", max_len=4)) == 4 and v.encode("x _ { 1 }", max_len=4)[-1] == v.eos
    with pytest.raises(ValueError, match="starts with"):
        Vocab(["a", "b"])
