"""The prepared bandit data as the stages share it: an instance's key in the JSON files
(:func:`fraction_key`) and the saved Dataset read back per instance (:func:`load`)."""
from __future__ import annotations

from .paths import DATASET


def fraction_key(f: float) -> str:
    """'0.12' for 0.12: the key of an instance in the JSON files."""
    return f"{f:g}"


def load(root, fractions=None) -> dict:
    """{fraction key: (reward, cost, harmful)} read back from the saved Dataset (numpy arrays)."""
    import numpy as np
    from datasets import load_from_disk

    ds = load_from_disk(str(root / DATASET)).with_format("numpy")
    frac = np.asarray(ds["fraction"])
    out = {}
    for f in sorted(set(frac.tolist())) if fractions is None else fractions:
        idx = np.flatnonzero(np.isclose(frac, f))
        if idx.size == 0:
            raise ValueError(f"{DATASET}: no instance for f={f}; rerun `dvc repro stages/repo_safety/dvc.yaml:repo_safety-prepare`")
        sub = ds.select(idx.tolist())
        order = np.argsort(np.asarray(sub["prompt"]))
        out[fraction_key(f)] = (np.stack(sub["reward"])[order].astype(float),
                                np.stack(sub["cost"])[order].astype(float),
                                np.asarray(sub["harmful"])[order].astype(bool))
    return out
