"""Scores of predicted LaTeX against references, and the retrieval baseline.

* BLEU: sacrebleu's corpus BLEU on the canonical token strings (tokens joined by spaces,
  ``tokenize='none'``: LaTeX tokens are the words), 0-100.
* exact match: share of predictions whose tokens equal the reference's.
* token error rate: summed token-level Levenshtein distance / summed reference length
  (rapidfuzz's Levenshtein on token lists).
* CER: the same on characters of the LaTeX with spaces removed (the paper's CER is
  character-level; its normalisation of the strings is not stated).
* authors' BLEU (:func:`authors_bleu`): BLEU as the AutoOpt authors compute it in their
  repository (Shobhit1201/AutoOpt, ``run_latex_ocr_with_METRIC.py``): nltk's sentence BLEU with
  smoothing method4 on their regex tokens of each string, averaged over images, x 100 here (their
  chart's scale). A different figure from the corpus BLEU above (another tokenizer, per-sentence
  smoothing, an average of sentences), so the two are never compared with each other.
"""
from __future__ import annotations

import numpy as np

from ..tokenizer import tokenize


def _tokens(s: str) -> list[str]:
    return tokenize(s)


def corpus_bleu(hyps: list[str], refs: list[str]) -> float:
    import sacrebleu

    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} predictions for {len(refs)} references")
    if not refs:
        raise ValueError("no references to score")
    h = [" ".join(_tokens(x)) for x in hyps]
    r = [" ".join(_tokens(x)) for x in refs]
    return float(sacrebleu.corpus_bleu(h, [r], tokenize="none").score)


# the authors' LaTeX tokens (their tokenize_latex): commands, single structural characters, words, numbers
AUTHORS_TOKEN = r"(\\[a-zA-Z]+|[{}_^=+\-*/(),]|[a-zA-Z]+|\d+)"


def authors_tokens(s: str) -> list[str]:
    import re

    return re.findall(AUTHORS_TOKEN, s)


def authors_bleu(hyps: list[str], refs: list[str]) -> float:
    """Mean over images of nltk's sentence BLEU (smoothing method4) on the authors' tokens, 0-100."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} predictions for {len(refs)} references")
    if not refs:
        raise ValueError("no references to score")
    smooth = SmoothingFunction().method4
    return 100.0 * float(np.mean([sentence_bleu([authors_tokens(r)], authors_tokens(h), smoothing_function=smooth)
                                  for h, r in zip(hyps, refs)]))


def error_rate(hyps: list[str], refs: list[str], unit: str = "token") -> float:
    """Summed edit distance / summed reference length, over tokens or characters."""
    from rapidfuzz.distance import Levenshtein

    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} predictions for {len(refs)} references")
    if unit == "token":
        split = _tokens
    elif unit == "char":
        def split(s: str) -> list[str]:
            return list("".join(_tokens(s)))
    else:
        raise ValueError(f"unit must be 'token' or 'char', got {unit!r}")
    dist = total = 0
    for h, r in zip(hyps, refs):
        hs, rs = split(h), split(r)
        dist += Levenshtein.distance(hs, rs)
        total += len(rs)
    return dist / max(total, 1)


def exact_match(hyps: list[str], refs: list[str]) -> float:
    return float(np.mean([_tokens(h) == _tokens(r) for h, r in zip(hyps, refs)])) if refs else 0.0


def score(hyps: list[str], refs: list[str]) -> dict[str, float]:
    return {"bleu": corpus_bleu(hyps, refs), "authors_bleu": authors_bleu(hyps, refs),
            "exact_match": exact_match(hyps, refs),
            "token_error_rate": error_rate(hyps, refs, "token"),
            "cer": error_rate(hyps, refs, "char"), "n": len(refs)}


def nearest(train: np.ndarray, query: np.ndarray, batch: int = 256) -> np.ndarray:
    """Index of the nearest training vector (Euclidean) for each query vector."""
    train = train.reshape(len(train), -1).astype(np.float32)
    query = query.reshape(len(query), -1).astype(np.float32)
    t2 = (train ** 2).sum(1)
    out = np.empty(len(query), dtype=np.int64)
    for s in range(0, len(query), batch):
        q = query[s:s + batch]
        d = t2[None, :] - 2 * q @ train.T       # + |q|^2, the same for every candidate
        out[s:s + batch] = d.argmin(1)
    return out
