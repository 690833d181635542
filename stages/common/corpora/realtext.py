"""Real English text and analogy questions that installed packages ship (no download).

gensim ships ``lee_background.cor`` (~60k words of news text; one document per line) and
Mikolov's ``questions-words.txt`` (19,544 analogy questions in 14 sections) under
``gensim/test/test_data/``. The text is small: only a few hundred of the questions have all
four words in its vocabulary, so scores on it are a proxy, reported with their coverage.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

TEXTS = ("lee_background.cor", "lee.cor")


def gensim_data(name: str) -> Path:
    """Path of a file gensim ships in its test data; a clear error when it is absent."""
    from gensim.test.utils import datapath

    path = Path(datapath(name))
    if not path.exists():
        raise FileNotFoundError(f"{path}: gensim's test data file {name!r} is missing; reinstall gensim")
    return path


def tokenize_documents(path: Path) -> list[list[str]]:
    """One document per non-empty line, tokenised by gensim's ``simple_preprocess`` (lower-case,
    letters only, 2-15 characters)."""
    from gensim.utils import simple_preprocess

    with open(path, encoding="utf-8", errors="replace") as fh:
        return [toks for line in fh if (toks := simple_preprocess(line))]


def build_vocab(docs: list[list[str]], min_count: int, max_vocab: int | None = None) -> list[str]:
    """Words seen at least ``min_count`` times, most frequent first (ties alphabetical)."""
    freq = Counter(w for d in docs for w in d)
    words = sorted((w for w, c in freq.items() if c >= min_count), key=lambda w: (-freq[w], w))
    return words[:max_vocab] if max_vocab else words


@dataclass(frozen=True)
class Analogy:
    section: str
    a: str
    b: str
    c: str
    d: str              # a : b :: c : d


def load_analogies(path: Path | None = None) -> list[Analogy]:
    """Mikolov's analogy questions (lower-cased), with their section names."""
    path = path or gensim_data("questions-words.txt")
    out, section = [], None
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            if line.startswith(":"):
                section = line[1:].strip()
                continue
            words = line.lower().split()
            if len(words) != 4 or section is None:
                raise ValueError(f"{path}:{n}: expected ': section' or four words, got {line!r}")
            out.append(Analogy(section, *words))
    return out


def covered(analogies: list[Analogy], vocab: set[str] | dict[str, int]) -> list[Analogy]:
    """The questions whose four words are all in ``vocab``."""
    return [q for q in analogies if all(w in vocab for w in (q.a, q.b, q.c, q.d))]
