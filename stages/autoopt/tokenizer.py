"""LaTeX tokens for M1: a command (``\\frac``, ``\\mathbb``) is one token, an escaped character
(``\\{``, ``\\ ``, ``\\\\``) is one token, every other non-space character is its own token
(so ``100`` is ``1 0 0`` and ``x_{1}`` is ``x _ { 1 }``). The canonical form of a LaTeX string is
its tokens joined by single spaces: ``detokenize(tokenize(s))``; the generator writes its labels
in that form, so a label round-trips exactly.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\S")
PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)


def tokenize(latex: str) -> list[str]:
    """Split LaTeX into tokens (commands kept whole). A trailing lone backslash is an error."""
    if not isinstance(latex, str):
        raise TypeError(f"tokenize needs a str, got {type(latex).__name__}")
    if re.search(r"(?<!\\)(\\\\)*\\$", latex):
        raise ValueError(f"LaTeX ends in a lone backslash: {latex[-20:]!r}")
    return _TOKEN.findall(latex)


def detokenize(tokens: list[str]) -> str:
    return " ".join(tokens)


def canonical(latex: str) -> str:
    return detokenize(tokenize(latex))


@dataclass
class Vocab:
    """Token <-> id. Ids 0..3 are <pad>, <bos>, <eos>, <unk>."""

    tokens: list[str] = field(default_factory=lambda: list(SPECIALS))

    def __post_init__(self) -> None:
        if tuple(self.tokens[:4]) != SPECIALS:
            raise ValueError(f"a vocabulary starts with {SPECIALS}, got {self.tokens[:4]}")
        self.index = {t: i for i, t in enumerate(self.tokens)}
        if len(self.index) != len(self.tokens):
            raise ValueError("a vocabulary holds each token once")

    @classmethod
    def build(cls, texts, min_count: int = 1) -> "Vocab":
        from collections import Counter

        counts = Counter(t for s in texts for t in tokenize(s))
        kept = sorted(t for t, c in counts.items() if c >= min_count)
        return cls(list(SPECIALS) + kept)

    def __len__(self) -> int:
        return len(self.tokens)

    pad, bos, eos, unk = 0, 1, 2, 3

    def encode(self, latex: str, max_len: int | None = None) -> list[int]:
        """<bos> tokens <eos>, truncated to ``max_len`` ids (the <eos> kept)."""
        ids = [self.bos] + [self.index.get(t, self.unk) for t in tokenize(latex)] + [self.eos]
        if max_len is not None and len(ids) > max_len:
            ids = ids[:max_len - 1] + [self.eos]
        return ids

    def decode(self, ids) -> str:
        out = []
        for i in ids:
            i = int(i)
            if i == self.eos:
                break
            if i in (self.pad, self.bos):
                continue
            out.append(self.tokens[i] if 0 <= i < len(self.tokens) else UNK)
        return detokenize(out)
