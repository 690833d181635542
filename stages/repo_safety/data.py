"""The prepared bandit data as the stages share it: an instance's key in the JSON files
(:func:`fraction_key`) and the saved Dataset read back per (verdict seed, instance) (:func:`load`)."""
from __future__ import annotations

from .paths import DATASET


def fraction_key(f: float) -> str:
    """'0.12' for 0.12: the key of an instance in the JSON files."""
    return f"{f:g}"


def load(root, seeds, fractions) -> dict:
    """{(seed, fraction key): (reward, cost, harmful)} read back from the saved Dataset (numpy arrays),
    for every seed in ``seeds`` and every fraction in ``fractions``."""
    import numpy as np
    from datasets import load_from_disk

    ds = load_from_disk(str(root / DATASET)).with_format("numpy")
    frac, seed_col = np.asarray(ds["fraction"]), np.asarray(ds["seed"])
    out = {}
    for seed in seeds:
        for f in fractions:
            idx = np.flatnonzero(np.isclose(frac, f) & (seed_col == seed))
            if idx.size == 0:
                raise ValueError(f"{DATASET}: no instance for seed {seed}, f={f}; rerun "
                                 f"`dvc repro stages/repo_safety/dvc.yaml:repo_safety-prepare`")
            sub = ds.select(idx.tolist())
            order = np.argsort(np.asarray(sub["prompt"]))
            out[(seed, fraction_key(f))] = (np.stack(sub["reward"])[order].astype(float),
                                            np.stack(sub["cost"])[order].astype(float),
                                            np.asarray(sub["harmful"])[order].astype(bool))
    return out
