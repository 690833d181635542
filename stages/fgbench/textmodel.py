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
    model, losses = fit(train_text, y, kind, p, seed, progress)
    return predict(model, test_text, kind, p.buckets, p.max_tokens), losses


def fit(train_text: list[str], y: np.ndarray, kind: str, p, seed: int, progress: bool = True):
    """The model trained on (train_text, y) (see :func:`fit_predict`), and the loss per epoch."""
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
    return model, losses


def predict(model, texts: list[str], kind: str, buckets: int, max_tokens: int) -> np.ndarray:
    """A trained model's outputs for ``texts``: probabilities (kind 'bool') or scaled values."""
    import torch

    te = [hashed_ids(t, buckets, max_tokens) for t in texts]
    model.eval()
    out = np.zeros(len(te), dtype=np.float64)
    with torch.no_grad():
        for idx, flat, off in _batches(te, np.arange(len(te)), 512):
            z = model(flat, off)
            out[idx] = (torch.sigmoid(z) if kind == "bool" else z).numpy()
    return out


def kind_of(question_type: str) -> str:
    """Which text model answers a question type: 'value' (value_regression) or 'bool'; an unknown
    type raises ValueError naming the allowed ones."""
    from .records import split_type

    return "value" if split_type(question_type)[1] == "value_regression" else "bool"


def to_answer(kind: str, v: float, scale: float = 1.0) -> str:
    """A model output as an answer string, as the questions hold them ('True' / a float's repr)."""
    return str(bool(v > 0.5)) if kind == "bool" else repr(float(v * scale))


# -- the text model as an MLflow model --------------------------------------------------------
def answer_all(models: dict, scale: dict[str, float], rows: list[dict], buckets: int,
               max_tokens: int) -> list[str | None]:
    """The answers of ``models`` ({'bool': ..., 'value': ...}) to question rows (``question``,
    ``type``, ``dataset``), in order; None where the kind has no model."""
    out: list[str | None] = [None] * len(rows)
    for kind, model in models.items():
        idx = [i for i, r in enumerate(rows) if kind_of(r["type"]) == kind]
        if not idx:
            continue
        values = predict(model, [rows[i]["question"] for i in idx], kind, buckets, max_tokens)
        for i, v in zip(idx, values):
            out[i] = to_answer(kind, v, scale.get(rows[i]["dataset"], 1.0) if kind == "value" else 1.0)
    return out


def example_rows(models: dict, rows: list[dict]):
    """The text model's input example: the first question of each kind ``models`` answer among
    ``rows`` (question rows, e.g. a seed's test split), in their order, as a DataFrame of the
    columns ``question``, ``type`` and ``dataset`` (what the pyfunc's predict takes)."""
    import pandas as pd

    picked, seen = [], set()
    for r in rows:
        kind = kind_of(r["type"])
        if kind in models and kind not in seen:
            seen.add(kind)
            picked.append(r)
    if not picked:
        raise ValueError("fgbench text model: no question of a kind it answers to make its input example from")
    return pd.DataFrame([{c: r[c] for c in ("question", "type", "dataset")} for r in picked])


def save_mlflow(target, models: dict, scale: dict[str, float], p, rows: list[dict]) -> None:
    """Write the text models as one MLflow pyfunc model folder at ``target`` (atomically): the
    weights (``weights.pt``, a state dict per kind), ``config.json`` (sizes, the value scale per
    dataset) and ``stages/fgbench/pyfunc.py`` (MLflow "models from code", nothing pickled), with
    its input example, one real question per kind from ``rows`` (:func:`example_rows`), from which
    MLflow infers its signature."""
    import json
    import tempfile
    from pathlib import Path

    import torch

    from stages.common.mlmodel import save_pyfunc

    with tempfile.TemporaryDirectory() as scratch:
        weights, config = Path(scratch) / "weights.pt", Path(scratch) / "config.json"
        torch.save({k: m.state_dict() for k, m in sorted(models.items())}, weights)
        config.write_text(json.dumps({"buckets": p.buckets, "dim": p.dim, "max_tokens": p.max_tokens,
                                      "kinds": sorted(models), "scale": scale}, sort_keys=True, indent=1))
        save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"weights": weights, "config": config},
                    input_example=example_rows(models, rows))


def load_mlflow(weights: str, config: str) -> tuple[dict, dict]:
    """The models and config that :func:`save_mlflow` wrote (weights loaded with weights_only)."""
    import json
    from pathlib import Path

    import torch

    cfg = json.loads(Path(config).read_text())
    state = torch.load(weights, weights_only=True)
    models = {}
    for kind in cfg["kinds"]:
        models[kind] = build(cfg["buckets"], cfg["dim"])
        models[kind].load_state_dict(state[kind])
    return models, cfg
