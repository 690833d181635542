"""A small text model trained from scratch on the question text (torch).

Questions are split into SMILES-aware tokens (bracket atoms, two-letter elements, words,
numbers, single symbols); unigrams and bigrams are hashed into ``buckets`` rows of an
EmbeddingBag (mean, sparse gradients: SparseAdam), followed by a two-layer MLP (Adam). One model answers the boolean questions
(logistic loss), another the value questions (squared loss on the answer divided by its
dataset's training spread). Hashing is a stable CRC32, so the same text gives the same ids.
"""
from __future__ import annotations

import re
import zlib

import numpy as np

TOKEN = re.compile(r"\[[^\]]+\]|Cl|Br|[A-Za-z]+|-?\d+(?:\.\d+)?|\S")


def tokens(text: str, max_tokens: int) -> list[str]:
    return TOKEN.findall(text)[:max_tokens]


def hashed_ids(text: str, buckets: int, max_tokens: int) -> list[int]:
    toks = tokens(text, max_tokens)
    grams = toks + [a + " " + b for a, b in zip(toks, toks[1:])]
    return [zlib.crc32(g.encode("utf-8")) % buckets for g in grams] or [0]


def _batches(ids: list[list[int]], order: np.ndarray, size: int):
    import torch

    for s in range(0, len(order), size):
        idx = order[s:s + size]
        flat = [i for k in idx for i in ids[k]]
        offsets = np.cumsum([0] + [len(ids[k]) for k in idx[:-1]])
        yield idx, torch.tensor(flat, dtype=torch.long), torch.tensor(offsets, dtype=torch.long)


def build(buckets: int, dim: int):
    from torch import nn

    class BagOfNgrams(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.EmbeddingBag(buckets, dim, mode="mean", sparse=True)
            self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 1))

        def forward(self, flat, offsets):
            return self.mlp(self.emb(flat, offsets)).squeeze(-1)

    return BagOfNgrams()


def fit_predict(train_text: list[str], y: np.ndarray, test_text: list[str], kind: str, p, seed: int,
                progress: bool = True) -> tuple[np.ndarray, list[float]]:
    """Train on (train_text, y) and predict test_text. kind 'bool' (y in {0, 1}: returns
    probabilities) or 'value' (y already scaled: returns predictions). Also the loss per epoch."""
    import torch
    from tqdm import tqdm

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = build(p.buckets, p.dim)
    # sparse rows for the embedding (only the n-grams of a batch are updated), dense for the MLP
    opts = [torch.optim.SparseAdam(list(model.emb.parameters()), lr=p.lr),
            torch.optim.Adam(list(model.mlp.parameters()), lr=p.lr)]
    loss_fn = torch.nn.BCEWithLogitsLoss() if kind == "bool" else torch.nn.MSELoss()
    tr = [hashed_ids(t, p.buckets, p.max_tokens) for t in train_text]
    te = [hashed_ids(t, p.buckets, p.max_tokens) for t in test_text]
    yt = torch.tensor(y, dtype=torch.float32)
    losses = []
    for _ in tqdm(range(p.epochs), desc=f"text model ({kind})", disable=not progress, mininterval=2):
        model.train()
        total, n = 0.0, 0
        for idx, flat, off in _batches(tr, rng.permutation(len(tr)), p.batch_size):
            for opt in opts:
                opt.zero_grad()
            loss = loss_fn(model(flat, off), yt[idx])
            loss.backward()
            for opt in opts:
                opt.step()
            total += float(loss.detach()) * len(idx)
            n += len(idx)
        losses.append(total / max(n, 1))
    model.eval()
    out = np.zeros(len(te), dtype=np.float64)
    with torch.no_grad():
        for idx, flat, off in _batches(te, np.arange(len(te)), 512):
            z = model(flat, off)
            out[idx] = (torch.sigmoid(z) if kind == "bool" else z).numpy()
    return out, losses
