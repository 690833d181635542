"""Saving and loading the dima world models (weights.pt + config.json, and the MLflow pyfunc folder)."""
from __future__ import annotations

from pathlib import Path


def load_models(weights: str | Path, config: str | Path) -> dict:
    """{``run.kind``: WorldModel} from the files the train stage wrote (weights_only load)."""
    import json

    import torch

    from .wm import Normaliser, WorldModel

    cfg = json.loads(Path(config).read_text())
    states = torch.load(str(weights), weights_only=True)
    out = {}
    for key, c in cfg.items():
        m = WorldModel(c["kind"], c["n"], c["d"], c["hidden"], c["layers"], c["sigma_max"], Normaliser.from_dict(c["norm"]))
        m.net.load_state_dict(states[key])
        m.net.eval()
        out[key] = m
    return out


def save_mlflow(target, weights, config) -> None:
    """The MLflow pyfunc model folder (models from code: stages/dima/pyfunc.py) with both files."""
    from stages.common.mlmodel import save_pyfunc

    save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"weights": weights, "config": config})
