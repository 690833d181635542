"""The corpora data stages (``corpora-attributes``, ``corpora-realtext``).

Each writes its corpus folders (layout in :mod:`stages.common.corpora`) and a summary in
``reports/corpora/<family>.json``; studies list the folders they read as deps in dvc.yaml. A corpus
is data, made once for every verdict seed: its draws come from ``data_seed`` (params.json), not
from the verdict seeds (docs/VERDICTS.md, section 1: work that does not depend on the seed runs once).
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

from stages.common.corpora.attributes import AttributeCorpusParams
from stages.common.corpora.topics import TopicCorpusParams

FAMILIES = ("attributes", "topics", "realtext")   # topics: by hand only (below)
# The topic corpora's section of params.json (``topics``) has no stage: it is the design that
# w2v_quartic draws a corpus from on every verdict seed (stages/w2v_quartic/draws.py), so no
# shared draw of it is made.


def _unique(names: list[str], what: str) -> None:
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{what} corpus names must be unique; repeated: {', '.join(dup)}")


class AttributesStep(Strict):
    corpora: list[AttributeCorpusParams] = Field(min_length=1, description="attribute-model corpora to sample")

    @model_validator(mode="after")
    def _names(self) -> "AttributesStep":
        _unique([c.name for c in self.corpora], "attribute")
        return self


class TopicsStep(Strict):
    corpora: list[TopicCorpusParams] = Field(min_length=1, description="topic-model corpora to sample")

    @model_validator(mode="after")
    def _names(self) -> "TopicsStep":
        _unique([c.name for c in self.corpora], "topic")
        return self


class RealTextStep(Strict):
    text: Literal["lee_background.cor", "lee.cor"] = Field(description="which text gensim ships")
    min_count: int = Field(ge=1, le=1000, description="keep words seen at least this often")
    window: int = Field(ge=1, le=50, description="co-occurrence window (tokens either side)")


class CorporaParams(Strict):
    data_seed: int = Field(ge=0, description="the seed of every synthetic corpus's draws: fixed, and separate "
                                             "from the verdict seeds (the corpora are made once for all of them)")
    attributes: AttributesStep
    topics: TopicsStep
    realtext: RealTextStep


PARAMS = CorporaParams


def _summary(c) -> dict:
    import numpy as np

    n_tokens = int(c.sentences.size if isinstance(c.sentences, np.ndarray)   # (pairs, 2): no loop
                   else sum(len(s) for s in c.sentences))
    return {"vocab": len(c.vocab), "sentences": len(c.sentences), "tokens": n_tokens,
            "cooccurrences": int(c.counts.sum()), "nonzero_cells": int(c.counts.nnz),
            "words_seen": int((np.asarray(c.counts.sum(1)).ravel() > 0).sum())}


def run_synthetic(ctx, family: str) -> dict:
    """Generate every corpus of ``family`` (attributes or topics) listed in the params."""
    from tqdm import tqdm

    from stages.common.io import atomic_dir

    from stages.common.corpora import attributes, corpus_path, topics, write_corpus

    generator = {"attributes": attributes, "topics": topics}[family]
    out = {}
    # the whole family folder is swapped in at once: no corpus of an earlier params set survives
    with atomic_dir(ctx.path(corpus_path(family))) as folder:
        for cp in tqdm(getattr(ctx.params, family).corpora, desc=f"{family} corpora"):
            c = generator.generate(cp, ctx.params.data_seed)
            write_corpus(folder / cp.name, c)
            out[cp.name] = _summary(c)
    return out


def run_realtext(ctx) -> dict:
    import datasets

    from stages.common.io import atomic_dir

    from stages.common.corpora import GeneratedCorpus, corpus_path, window_counts, write_corpus
    from stages.common.corpora.realtext import build_vocab, covered, gensim_data, load_analogies, tokenize_documents

    p = ctx.params.realtext
    docs = tokenize_documents(gensim_data(p.text))
    vocab = build_vocab(docs, p.min_count)
    index = {w: i for i, w in enumerate(vocab)}
    ids = [[index[w] for w in d if w in index] for d in docs]
    ids = [d for d in ids if d]
    questions = load_analogies()
    have = set(covered(questions, index))
    c = GeneratedCorpus(name=p.text.split(".")[0], kind="realtext", vocab=vocab, sentences=ids,
                        counts=window_counts(ids, len(vocab), p.window),
                        truth={"text": p.text, "min_count": p.min_count, "window": p.window,
                               "source": "gensim/test/test_data (shipped with gensim)"})
    target = ctx.path(corpus_path("realtext"))
    write_corpus(target, c)
    # the analogy questions beside the corpus, marked by whether the vocabulary covers them
    with atomic_dir(target / "analogies") as tmp:
        datasets.Dataset.from_dict({
            "section": [q.section for q in questions], "a": [q.a for q in questions],
            "b": [q.b for q in questions], "c": [q.c for q in questions], "d": [q.d for q in questions],
            "covered": [q in have for q in questions]}).save_to_disk(str(tmp))
    return {c.name: {**_summary(c), "analogies": len(questions), "analogies_covered": len(have)}}


def main(argv: list[str]) -> None:
    if len(argv) != 1 or argv[0] not in FAMILIES:
        raise SystemExit(f"usage: python -m stages.corpora {{{','.join(FAMILIES)}}}")
    family = argv[0]
    from stages.common.io import write_json
    from stages.common.runtime.stage import stage

    with stage("corpora", family, CorporaParams) as ctx:
        summary = run_realtext(ctx) if family == "realtext" else run_synthetic(ctx, family)
        write_json(ctx.path(f"reports/corpora/{family}.json"), summary)
        for name, s in summary.items():
            print(f"  {family}/{name}: {s['vocab']} words, {s['tokens']} tokens, "
                  f"{s['nonzero_cells']} non-zero co-occurrence cells")
