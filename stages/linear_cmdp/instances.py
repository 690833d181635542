"""The instances file prepare writes, read back as CMDPs, and the seed a name (a setup's, an
agent's) contributes to the random streams of prepare's draws and train's runs."""
from __future__ import annotations


def setup_seed(name: str) -> int:
    import zlib

    return zlib.crc32(name.encode())


def load_instances(path) -> list[dict]:
    """The instances of ``INSTANCES`` with arrays as numpy arrays and a ``cmdp`` (CMDP) each; every
    record keeps its verdict ``seed`` and its ``index`` within that seed."""
    import json

    data = json.loads(open(path).read())["instances"]
    return [as_record(rec) for rec in data]


def as_record(rec: dict) -> dict:
    """One instance record with its arrays as numpy arrays and its ``cmdp``."""
    import numpy as np

    from .cmdp import CMDP

    arr = {k: np.asarray(rec[k], dtype=float) for k in ("P", "r", "u", "mu", "phi", "safe_policy")}
    rec = {**rec, **arr}
    rec["cmdp"] = CMDP(P=arr["P"], r=arr["r"], u=arr["u"], mu=arr["mu"], phi=arr["phi"],
                       threshold=float(rec["threshold"]), safe_policy=arr["safe_policy"])
    return rec


def seeds_of(insts: list[dict]) -> list[int]:
    """The verdict seeds the instances hold, in the order they appear."""
    out: list[int] = []
    for rec in insts:
        if rec["seed"] not in out:
            out.append(rec["seed"])
    return out
