"""The verdict seeds as batches: every seed's replications (or episodes) are consecutive rows of
one array, and every random draw of a row comes from its own seed's generator.

:class:`SeedRngs` stands in for a numpy Generator where a batched function draws noise for all its
rows at once (``standard_normal((B, ...))``, ``random((B, ...))``): it draws each seed's block of
rows from that seed's generator and stacks them, so a seed's rows get exactly the draws they get
when the seed runs alone. A function that draws row by row asks for :meth:`SeedRngs.row`.
:func:`stack` and :func:`split` move between per-seed arrays and the batch.

How many seeds share a batch is a matter of speed only (every seed's figures are bit for bit the
same however the seeds are grouped; tests/escort_belief/test_seeds.py): :func:`seed_groups` puts
whole seeds together while the batch's (rows, n, n) float64 kernel matrices stay within
:data:`CACHE_BYTES`. Measured (benchmarks/escort_belief/seeds.py): small batches gain from sharing
(the per-call overhead is paid once), while at d = 20 one batch of all five seeds' 100
replications ran 1.26x slower than one seed after another, its 8 MB matrices out of cache.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


CACHE_BYTES = 2 * 2 ** 20    # a core's L2 cache on the machine the study was timed on


def seed_groups(counts: Sequence[int], n: int, cache_bytes: float = CACHE_BYTES) -> list[list[int]]:
    """Consecutive groups of seeds (indices into ``counts``, each seed's rows) whose rows together
    keep one (rows, n, n) float64 array within ``cache_bytes``; a seed larger than that goes alone."""
    cap = max(1.0, cache_bytes / (8.0 * n * n))
    groups: list[list[int]] = []
    rows = 0
    for i, c in enumerate(counts):
        if groups and rows + c <= cap:
            groups[-1].append(i)
            rows += c
        else:
            groups.append([i])
            rows = c
    return groups


class SeedRngs:
    """One Generator per block of consecutive rows (one block per seed, ``counts`` rows each)."""

    def __init__(self, gens: Sequence[np.random.Generator], counts: Sequence[int]):
        if len(gens) != len(counts) or not gens or min(counts) < 1:
            raise ValueError(f"SeedRngs: one generator per block of >= 1 rows, got {len(gens)} "
                             f"generators for counts {list(counts)}")
        self.gens, self.counts = list(gens), [int(c) for c in counts]
        self.owner = np.repeat(np.arange(len(self.gens)), self.counts)

    @classmethod
    def of(cls, seeds: Sequence[int], counts: Sequence[int], *stream: int) -> "SeedRngs":
        """Each seed's named stream (:func:`stages.common.seeds.rng`), as the study drew it when it
        ran one seed."""
        from stages.common.seeds import rng

        return cls([rng(s, *stream) for s in seeds], counts)

    @classmethod
    def single(cls, rng: np.random.Generator, rows: int) -> "SeedRngs":
        """One generator for every row (one seed alone)."""
        return cls([rng], [rows])

    @property
    def rows(self) -> int:
        return int(sum(self.counts))

    def _draw(self, method: str, shape) -> np.ndarray:
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        if shape[0] != self.rows:
            raise ValueError(f"SeedRngs: draws for {shape[0]} rows, the batch has {self.rows}")
        return np.concatenate([getattr(g, method)((c, *shape[1:])) for g, c in zip(self.gens, self.counts)])

    def standard_normal(self, shape) -> np.ndarray:
        return self._draw("standard_normal", shape)

    def random(self, shape) -> np.ndarray:
        return self._draw("random", shape)

    def row(self, b: int) -> np.random.Generator:
        """The generator of row ``b`` (its seed's)."""
        return self.gens[int(self.owner[b])]

    def subset(self, rows: np.ndarray) -> "SeedRngs":
        """The same generators for the rows ``rows`` (increasing indices) of the batch."""
        used = np.bincount(self.owner[rows], minlength=len(self.gens))
        keep = np.flatnonzero(used)
        return SeedRngs([self.gens[i] for i in keep], used[keep])


def as_rows(rng, rows: int) -> SeedRngs:
    """``rng`` as a SeedRngs over ``rows`` rows (a plain Generator serves every row)."""
    return rng if isinstance(rng, SeedRngs) else SeedRngs.single(rng, rows)


def stack(parts: Sequence[np.ndarray]) -> tuple[np.ndarray, list[int]]:
    """Per-seed arrays stacked along their first axis, and the rows each brought."""
    return np.concatenate(parts), [len(p) for p in parts]


def split(batch: np.ndarray, counts: Sequence[int]) -> list[np.ndarray]:
    """The inverse of :func:`stack`: the batch's first axis cut into the seeds' blocks."""
    if batch.shape[0] != sum(counts):
        raise ValueError(f"split: {batch.shape[0]} rows, blocks of {list(counts)}")
    return np.split(batch, np.cumsum(counts)[:-1])
