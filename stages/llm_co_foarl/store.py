"""Saving and loading the trained models (state dicts + a config), and the MLflow model folder."""
from __future__ import annotations

import json
from pathlib import Path


ARCH = ("d_model", "heads", "enc_layers", "dec_layers", "entities", "pointer")


def config_of(p) -> dict:
    return {k: getattr(p, k) for k in ARCH}


def build(cfg: dict):
    from types import SimpleNamespace

    from .core import make_model

    return make_model(SimpleNamespace(**{k: cfg.get(k, False) for k in ARCH}))


def load_model(weights: str | Path, config: str | Path):
    import torch

    cfg = json.loads(Path(config).read_text())
    model = build(cfg)
    model.load_state_dict(torch.load(weights, weights_only=True))
    return model.eval(), cfg


def example_frame(data: dict):
    """The pyfunc's input example: the first test instance of each problem of ``data`` (the
    prepared dataset.json), as predict takes it (``problem``, ``instance``)."""
    import pandas as pd

    rows = []
    for prob, d in data.items():
        r = d["test"][0]
        rows.append({"problem": prob, "instance": r["pts"] if prob == "tsp" else {"items": r["items"],
                                                                                  "cap": r["cap"]}})
    return pd.DataFrame(rows, columns=["problem", "instance"])


def signature():
    """The pyfunc's signature, written out: MLflow cannot infer one column that holds a TSP
    instance (a list of points) in one row and a knapsack instance (a dict) in another, so
    ``instance`` is ``any`` (solve_rows checks it); the output is one list of ints per row."""
    from mlflow.models import ModelSignature
    from mlflow.types.schema import AnyType, Array, ColSpec, DataType, Schema

    return ModelSignature(inputs=Schema([ColSpec(DataType.string, "problem"), ColSpec(AnyType(), "instance")]),
                          outputs=Schema([ColSpec(Array(DataType.long))]))


def save_mlflow(target, weights: Path, config: Path, example) -> None:
    """The FOARL model as an MLflow pyfunc folder at ``target`` (atomically; pyfunc.py), with
    ``example`` (:func:`example_frame`) as its input example and :func:`signature`."""
    from stages.common.mlmodel import save_pyfunc

    save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"weights": weights, "config": config},
                signature=signature(), input_example=example)


def solve_rows(model, rows: list[dict]) -> list[list[int]]:
    """Greedy solutions (as written, up to EOS) for rows {problem, instance}."""
    import numpy as np

    from . import core
    from . import problems as P
    from .model import generate

    out = []
    for r in rows:
        prob = r["problem"]
        if prob not in P.PROBLEMS:
            raise ValueError(f"llm_co_foarl: problem must be one of {P.PROBLEMS}, got {prob!r}")
        if prob == "tsp":
            pts = np.asarray(r["instance"], dtype=int)
            src, size = P.describe_tsp(pts), len(pts)
        else:
            items = np.asarray(r["instance"]["items"], dtype=int)
            src, size = P.describe_kp(items, int(r["instance"]["cap"])), len(items)
        seq = generate(model, core.pad([src]), core.max_len(prob, size), greedy=True)[0].tolist()
        out.append(P.until_eos(seq)[0])
    return out
