"""Reading the shared corpus folders for this study (layout in :mod:`stages.common.corpora`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class CorpusCounts:
    path: Path
    vocab: list[str]
    counts: Any                  # scipy.sparse.csr_matrix, symmetric, float64
    truth: dict[str, Any]
    word_truth: dict[str, list]


def read_counts(path: str | Path, truth_columns: tuple[str, ...] = ()) -> CorpusCounts:
    """The vocabulary, the symmetric co-occurrence counts (CSR, float64) and the ground truth
    of a corpus folder; a clear error when the folder is not one."""
    from stages.common.corpora import load_corpus

    c = load_corpus(path)
    return CorpusCounts(path=c.path, vocab=c.vocab, counts=c.counts.astype(np.float64), truth=c.truth,
                        word_truth={k: c.word_truth[k] for k in truth_columns})


def read_analogies(path: str | Path) -> dict[str, list]:
    """The analogy questions saved beside the real-text corpus (columns section, a, b, c, d, covered)."""
    from stages.common.corpora import load_analogy_table

    return load_analogy_table(path)
