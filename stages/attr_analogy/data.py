"""Reading the shared corpus folders for this study (layout in :mod:`stages.common.corpora`)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path


def read_counts(path: str | Path):
    """The corpus folder at ``path`` (:class:`stages.common.corpora.Corpus`) with its
    co-occurrence counts as float64 CSR, what the estimators of M and log M work on; a clear
    error when the folder is not one."""
    import numpy as np

    from stages.common.corpora import load_corpus

    c = load_corpus(path)
    return replace(c, counts=c.counts.astype(np.float64))
