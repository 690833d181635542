"""Saving and loading the dima world models (weights.pt + config.json, and the MLflow pyfunc folder)."""
from __future__ import annotations

from pathlib import Path


def load_models(weights: str | Path, config: str | Path, seed: int | None = None) -> dict:
    """{``run.kind``: WorldModel} of one verdict seed (default: the first the train stage ran) from
    the files the train stage wrote (weights_only load). config.json is ``{seed: {run.kind: cfg}}``
    and the weights' keys ``s<seed>/<run.kind>``."""
    import json

    import torch

    from .wm import Normaliser, WorldModel

    cfg_all = json.loads(Path(config).read_text())
    key = str(seed) if seed is not None else next(iter(cfg_all))
    if key not in cfg_all:
        raise ValueError(f"dima world models: no seed {key} in {config} (seeds {list(cfg_all)})")
    states = torch.load(str(weights), weights_only=True)
    out = {}
    for name, c in cfg_all[key].items():
        m = WorldModel(c["kind"], c["n"], c["d"], c["hidden"], c["layers"], c["sigma_max"], Normaliser.from_dict(c["norm"]))
        m.net.load_state_dict(states[f"s{key}/{name}"])
        m.net.eval()
        out[name] = m
    return out


def input_example(s, a):
    """The pyfunc's input example: states ``s`` (rows x 6N) and joint actions ``a`` (rows x N) as the
    columns ``s0``.., ``a0``.. (actions int64, as pandas makes them from Python ints), and the
    ``model`` column: the default (missing), then ``joint``, ``joint_chain``, ... for the other rows,
    so that MLflow infers ``model`` as an optional string column."""
    import numpy as np
    import pandas as pd

    s, a = np.asarray(s, dtype=float), np.asarray(a, dtype=np.int64)
    df = pd.DataFrame(s, columns=[f"s{i}" for i in range(s.shape[1])])
    for i in range(a.shape[1]):
        df[f"a{i}"] = a[:, i]
    kinds = [None, "joint", "joint_chain"]
    df["model"] = [kinds[i % len(kinds)] for i in range(len(df))]
    return df


def save_mlflow(target, weights, config, example) -> None:
    """The MLflow pyfunc model folder (models from code: stages/dima/pyfunc.py) with both files and
    ``example`` (:func:`input_example`) as its input example, from which MLflow infers its signature."""
    from stages.common.mlmodel import save_pyfunc

    save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"weights": weights, "config": config},
                input_example=example)
