"""Synthetic and real text corpora that several studies share (the design's "synthetic corpora").

One data stage per corpus family, run as ``python -m stages.corpora <family>``:

- ``corpora-attributes``: words are vectors of binary attributes; word pairs are sampled
  from the attribute co-occurrence model (:mod:`.attributes`) -> ``data/corpora/attributes/<name>/``
- ``corpora-topics``: documents from a topic model (:mod:`.topics`) -> ``data/corpora/topics/<name>/``
- ``corpora-realtext``: a text gensim ships (tokenised, lower-cased) and Mikolov's analogy
  questions (``questions-words.txt``, also shipped by gensim) -> ``data/corpora/realtext/``

Every corpus folder has the same layout, read back by :func:`load_corpus`:

``tokens.txt.gz``
    the corpus itself, one sentence (or document) per line, tokens separated by spaces, gzip'd
    (level 1, no name or time in the header, so the same corpus gives the same bytes); gensim's
    ``LineSentence`` reads it as is. Compressed because pair corpora are large: the default
    20M-pair attribute corpus is 480 MB as text, about 4x less gzip'd, for ~1 s per 100 MB.
``vocab/``
    Hugging Face dataset, one row per word id: ``id``, ``token``, ``count`` (occurrences in
    the token file) and the generative model's ground truth per word (e.g. ``attributes``, ``topic``).
``counts/``
    Hugging Face dataset of the symmetric co-occurrence matrix as sparse triples ``i, j, count``
    (both (i, j) and (j, i) present; the window is in ``truth.json``).
``truth.json``
    the generative model's parameters and anything else a study needs to rebuild the exact
    model (seed, sizes, marginals, strengths, ...), plus ``kind`` and ``name``.
"""
from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = "data/corpora"
TOKENS = "tokens.txt.gz"                 # the token file of every corpus folder


@dataclass
class GeneratedCorpus:
    """What a generator returns and :func:`write_corpus` stores."""

    name: str
    kind: str
    vocab: list[str]
    sentences: Sequence[Sequence[int]]          # word ids per sentence / document
    counts: Any                                   # scipy.sparse matrix (V x V), symmetric
    word_truth: dict[str, list] = field(default_factory=dict)   # per-word ground-truth columns
    truth: dict[str, Any] = field(default_factory=dict)         # model-level ground truth


@dataclass
class Corpus:
    """A corpus folder read back: vocabulary, counts as CSR, ground truth, the token file."""

    path: Path
    vocab: list[str]
    word_counts: np.ndarray
    counts: Any                                   # scipy.sparse.csr_matrix (V x V)
    word_truth: dict[str, list]
    truth: dict[str, Any]

    @property
    def tokens_path(self) -> Path:
        return self.path / TOKENS

    def lines(self) -> Iterable[str]:
        """The token file's lines (sentences), decompressed."""
        with gzip.open(self.tokens_path, "rt", encoding="utf-8") as fh:
            for line in fh:
                yield line.rstrip("\n")

    def sentences(self) -> Iterable[list[str]]:
        """Stream the token file (what gensim's Word2Vec trains on)."""
        from gensim.models.word2vec import LineSentence

        return LineSentence(str(self.tokens_path))

    @property
    def index(self) -> dict[str, int]:
        return {w: i for i, w in enumerate(self.vocab)}


def window_counts(sentences: Iterable[Sequence[int]], vocab_size: int, window: int):
    """Symmetric co-occurrence counts within ``window`` positions (each ordered pair counted
    once per occurrence, both directions), as a scipy CSR matrix."""
    import scipy.sparse as sp

    rows, cols = [], []
    for s in sentences:
        s = np.asarray(s, dtype=np.int64)
        for off in range(1, window + 1):
            if len(s) <= off:
                break
            rows.append(s[:-off]); cols.append(s[off:])
    if not rows:
        return sp.csr_matrix((vocab_size, vocab_size), dtype=np.int64)
    r, c = np.concatenate(rows), np.concatenate(cols)
    m = sp.coo_matrix((np.ones(len(r), dtype=np.int64), (r, c)), shape=(vocab_size, vocab_size)).tocsr()
    return (m + m.T).tocsr()


def write_corpus(target: str | Path, corpus: GeneratedCorpus) -> Path:
    """Write ``corpus`` atomically to the folder ``target`` (layout in the module docstring)."""
    import datasets
    import scipy.sparse as sp

    from stages.common.io import atomic_dir, write_json

    V = len(corpus.vocab)
    counts = sp.coo_matrix(corpus.counts)
    if counts.shape != (V, V):
        raise ValueError(f"corpus {corpus.name}: counts are {counts.shape}, vocabulary has {V} words")
    word_counts = np.zeros(V, dtype=np.int64)
    with atomic_dir(target) as tmp:
        names = np.asarray(corpus.vocab, dtype=object)
        with open(tmp / TOKENS, "wb") as raw, \
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=1, mtime=0) as gz, \
                io.TextIOWrapper(gz, encoding="utf-8", newline="\n") as fh:
            if isinstance(corpus.sentences, np.ndarray):        # equal-length sentences: vectorised
                ids = corpus.sentences.astype(np.int64)
                word_counts += np.bincount(ids.ravel(), minlength=V)
                for chunk in range(0, len(ids), 1 << 18):
                    fh.write("\n".join(map(" ".join, names[ids[chunk:chunk + (1 << 18)]].tolist())))
                    fh.write("\n")
            else:
                for s in corpus.sentences:
                    ids = np.asarray(s, dtype=np.int64)
                    word_counts += np.bincount(ids, minlength=V)
                    fh.write(" ".join(names[ids].tolist()))
                    fh.write("\n")
        cols = {"id": list(range(V)), "token": list(corpus.vocab), "count": word_counts.tolist()}
        for key, values in corpus.word_truth.items():
            if len(values) != V:
                raise ValueError(f"corpus {corpus.name}: ground truth {key!r} has {len(values)} rows, not {V}")
            cols[key] = [np.asarray(v).tolist() for v in values]
        datasets.Dataset.from_dict(cols).save_to_disk(str(tmp / "vocab"))
        datasets.Dataset.from_dict({
            "i": counts.row.astype(np.int32), "j": counts.col.astype(np.int32),
            "count": counts.data.astype(np.int64)}).save_to_disk(str(tmp / "counts"))
        write_json(tmp / "truth.json", {"kind": corpus.kind, "name": corpus.name, **corpus.truth})
    return Path(target)


def load_corpus(path: str | Path) -> Corpus:
    """Read a corpus folder written by :func:`write_corpus`; a clear error if it is not one."""
    import datasets
    import scipy.sparse as sp

    path = Path(path)
    missing = [p for p in (TOKENS, "vocab", "counts", "truth.json") if not (path / p).exists()]
    if missing:
        raise FileNotFoundError(
            f"{path} is not a corpus folder (missing {', '.join(missing)}); "
            "run `dvc repro` for the corpora stage that makes it")
    # read whole Arrow columns: indexing a dataset column (``ds["count"]``) yields a lazy
    # Column that numpy/scipy convert one row at a time (minutes for a 500k-cell corpus)
    vocab = datasets.load_from_disk(str(path / "vocab")).data
    table = datasets.load_from_disk(str(path / "counts")).data
    V = vocab.num_rows
    col = {k: table.column(k).to_numpy() for k in ("i", "j", "count")}
    counts = sp.csr_matrix((col["count"], (col["i"], col["j"])), shape=(V, V))
    truth_cols = [c for c in vocab.column_names if c not in ("id", "token", "count")]
    return Corpus(path=path, vocab=vocab.column("token").to_pylist(),
                  word_counts=vocab.column("count").to_numpy(), counts=counts,
                  word_truth={c: vocab.column(c).to_pylist() for c in truth_cols},
                  truth=json.loads((path / "truth.json").read_text()))


def load_analogy_table(path: str | Path | None = None) -> dict[str, list]:
    """The analogy questions the realtext stage saves beside its corpus (columns section, a, b,
    c, d, covered), as lists."""
    import datasets

    path = Path(path) if path else Path(corpus_path("realtext")) / "analogies"
    table = datasets.load_from_disk(str(path)).data
    return {c: table.column(c).to_pylist() for c in table.column_names}


def corpus_path(family: str, name: str | None = None) -> str:
    """Where the stage writes a corpus: ``data/corpora/<family>[/<name>]`` (relative to the repo)."""
    return f"{ROOT}/{family}" + (f"/{name}" if name else "")
