"""What one verdict seed draws: its own topic corpora, and the arms every seed scores.

Claims contract v2 (docs/VERDICTS.md, section 1): a verdict seed is one independent repetition of
the whole experiment. The shared topic corpora (``data/corpora/topics``, made once by the
corpora stage with its fixed ``data_seed``) are a single draw: a figure on them would be that
draw's, whatever the verdict seed. So each verdict seed samples its own corpora from the same
generative model and sizes (``corpora.<profile>.topics`` of stages/corpora/params.json,
:func:`stages.common.corpora.topics.generate`), with a corpus seed derived from the verdict seed
(:func:`corpus_seed`: a stream of its own, so it never equals another seed's, a calibration
seed's, or the shared corpora's draw). The bridge words (``second_topics``) are drawn from that
seed too. Real text (lee_background) is one fixed text: only the init and gensim's seeds vary.

The control arm of the downstream must (:func:`plain_factorisation`) is here too: the top-d
eigenpairs of the centred co-occurrences P_ij - P_i P_j, i.e. the quartic's target M* without its
normalisation 1 / (1/2 (P_ij + P_i P_j)) (the omniscient reweighting that makes the quartic loss
a factorisation of M*).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

CORPUS_STREAM = 7          # the verdict seed's stream for its corpora (stages.common.seeds.rng convention)


def corpus_seed(seed: int) -> int:
    """The seed :func:`topics.generate` gets for verdict (or calibration) seed ``seed``: a 32-bit
    draw of numpy's SeedSequence([seed, CORPUS_STREAM]), so seeds' corpora are independent draws."""
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return int(np.random.SeedSequence([seed, CORPUS_STREAM]).generate_state(1, dtype=np.uint32)[0])


@dataclass
class SeedCorpus:
    """A corpus in memory, with what the study reads of a corpus folder (``stages.common.corpora
    .Corpus``): vocabulary, word counts, symmetric window counts (CSR), ground truth, window."""

    name: str
    vocab: list[str]
    sentences: list            # word ids per document
    counts: object             # scipy.sparse.csr_matrix (V x V)
    word_truth: dict
    truth: dict
    seed: int                  # the corpus seed it was generated with

    @cached_property
    def word_counts(self) -> np.ndarray:
        V = len(self.vocab)
        return np.bincount(np.concatenate([np.asarray(s, dtype=np.int64) for s in self.sentences]),
                           minlength=V)

    def token_sentences(self) -> list[list[str]]:
        """The documents as token lists (what gensim's Word2Vec trains on; the same tokens the
        corpora stage would write to tokens.txt.gz)."""
        names = np.asarray(self.vocab, dtype=object)
        return [names[np.asarray(s, dtype=np.int64)].tolist() for s in self.sentences]

    def sentence_ids(self) -> list[np.ndarray]:
        return [np.asarray(s, dtype=np.int64) for s in self.sentences]


def sample_corpus(spec, seed: int) -> SeedCorpus:
    """Verdict seed ``seed``'s own draw of the topic corpus ``spec`` (a TopicCorpusParams)."""
    import scipy.sparse as sp

    from stages.common.corpora import topics

    cs = corpus_seed(seed)
    g = topics.generate(spec, cs)
    return SeedCorpus(name=g.name, vocab=list(g.vocab), sentences=list(g.sentences),
                      counts=sp.csr_matrix(g.counts), word_truth=dict(g.word_truth), truth=dict(g.truth),
                      seed=cs)


def topic_specs(profile: str, root=None) -> dict:
    """The topic corpora of ``profile`` (stages/corpora/params.json ``corpora.<profile>.topics
    .corpora``), validated, by name: the shared corpora's generative model and sizes."""
    from stages.common.corpora.topics import TopicCorpusParams
    from stages.common.runtime.params import read_study_file, validate

    section = read_study_file("corpora", root)["corpora"][profile]["topics"]["corpora"]
    specs = [validate(f"corpora.{profile}.topics.corpora[{i}]", TopicCorpusParams, c)
             for i, c in enumerate(section)]
    return {c.name: c for c in specs}


def plain_factorisation(P: np.ndarray, u: np.ndarray, d: int) -> np.ndarray:
    """The control arm: V_d Lambda_d^(1/2) of P - P_i P_j (the quartic's M* = 2 (P - P_i P_j) /
    (P + P_i P_j) without its normalisation), negative eigenvalues clipped as for the closed form."""
    from . import theory

    C = np.asarray(P, dtype=np.float64) - np.outer(u, u)
    s = theory.spectrum(C, d)
    return theory.closed_form(s.values[:d], s.vectors[:, :d])
