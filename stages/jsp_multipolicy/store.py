"""Saving and loading the trained networks: ``models.pt`` (every arm's network of every verdict
seed, byte-deterministic) and one MLflow pyfunc folder per served network (pyfunc.py), and the
solver behind the pyfunc's predict."""
from __future__ import annotations

import io
import json
from pathlib import Path


def to_bytes(obj) -> bytes:
    """``torch.save`` through a buffer: the archive is named after the file torch writes to, so a
    (random) temp file name would make the bytes differ run to run."""
    import torch

    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def entry(net) -> dict:
    """A network as models.pt holds it: its state dict (moved to CPU first: the state dict's own
    type and metadata are pickled too), its kind (``mlp``: policy.py's; ``l2d``) and sizes."""
    e = {"state": net.cpu().state_dict(), "n_policies": net.n_policies, "hidden": net.hidden}
    if hasattr(net, "hidden_head"):
        e |= {"kind": "l2d", "hidden_head": net.hidden_head}
    return e


def build(e: dict, device="cpu"):
    """The network of one models.pt entry, on ``device``."""
    from .l2d import build_l2d
    from .policy import build_net

    net = build_l2d(e["hidden"], e["hidden_head"]) if e.get("kind") == "l2d" else build_net(e["n_policies"],
                                                                                            e["hidden"])
    net.load_state_dict(e["state"])
    return net.to(device)


def models_bytes(nets: dict, seeds) -> bytes:
    """models.pt: {arm: {"seeds": [...], "nets": [entry per seed]}}."""
    return to_bytes({arm: {"seeds": [int(s) for s in seeds], "nets": [entry(n) for n in arm_nets]}
                     for arm, arm_nets in nets.items()})


def load_models(path, device="cpu") -> tuple[dict, list[int]]:
    """({arm: [net per seed]}, the seeds) from models.pt, loaded with weights_only."""
    import torch

    raw = torch.load(path, map_location="cpu", weights_only=True)
    seeds = {tuple(v["seeds"]) for v in raw.values()}
    if len(seeds) != 1:
        raise ValueError(f"models.pt: the arms hold different seeds: {sorted(seeds)}")
    return {arm: [build(e, device) for e in v["nets"]] for arm, v in raw.items()}, list(seeds.pop())


def load_nets(path, device="cpu") -> dict:
    """{name: net} from one served network's weights.pt ({name: entry}), loaded with weights_only."""
    import torch

    return {name: build(e, device) for name, e in torch.load(path, map_location="cpu", weights_only=True).items()}


def save_mlflow(target, models: dict, samples: int, machines, durations) -> None:
    """One MLflow pyfunc folder per network, ``target/<name>`` (atomically): its ``weights.pt``
    (``{name: entry}``), ``config.json`` (its name and the default sampling budget) and pyfunc.py
    (MLflow "models from code", nothing pickled). Its input example is the shops ``machines`` and
    ``durations`` ((n, n_jobs, n_machines) ints) with the params ``samples`` and ``seed`` 0, from
    which MLflow infers its signature (inputs, outputs and params)."""
    import tempfile

    import pandas as pd

    from stages.common.io import atomic_dir
    from stages.common.mlmodel import pinned, save_pyfunc

    example = (pd.DataFrame({"machines": [[[int(v) for v in r] for r in m] for m in machines],
                             "durations": [[[int(v) for v in r] for r in d] for d in durations]}),
               {"samples": int(samples), "seed": 0})
    code = Path(__file__).with_name("pyfunc.py")
    with tempfile.TemporaryDirectory() as scratch, atomic_dir(target) as tmp:
        for name, e in sorted(models.items()):
            w, c = Path(scratch) / f"{name}.pt", Path(scratch) / f"{name}.json"
            w.write_bytes(to_bytes({name: e}))
            c.write_text(json.dumps({"name": name, "samples": samples}, sort_keys=True, indent=1))
            save_pyfunc(tmp / name, code, {"weights": w, "config": c},
                        requirements=pinned("torch", "numpy", "pandas"), input_example=example)


def solve_frame(net, frame, samples: int, seed: int):
    """The pyfunc's predict: ``frame`` has the columns ``machines`` and ``durations`` (each row an
    (n_jobs, n_machines) nested list: job j's k-th operation runs on machine machines[j][k] for
    durations[j][k]). Rows of one shape are solved together, in order, as the evaluate stage does
    (best of ``samples`` sampled dispatch sequences, seed ``seed``). Returns a DataFrame: makespan,
    sequence (the dispatch sequence: job ids) and start (start times, (n_jobs, n_machines))."""
    import numpy as np
    import pandas as pd

    from .jsp import schedule
    from .policy import sample_best

    missing = {"machines", "durations"} - set(frame.columns)
    if missing:
        raise ValueError(f"jsp_multipolicy: the input needs the columns machines and durations; "
                         f"missing {sorted(missing)}")
    M = [np.asarray(m, dtype=np.int64) for m in frame["machines"]]
    D = [np.asarray(d, dtype=np.int64) for d in frame["durations"]]
    for i, (m, d) in enumerate(zip(M, D)):
        if m.ndim != 2 or m.shape != d.shape or sorted(m[0]) != list(range(m.shape[1])) or (d < 1).any() or any(
                sorted(r) != list(range(m.shape[1])) for r in m):
            raise ValueError(f"jsp_multipolicy: row {i}: machines must be (n_jobs, n_machines), each job's row a "
                             f"permutation of 0..n_machines-1, and durations positive of the same shape")
    out = [None] * len(M)
    for shape in dict.fromkeys(m.shape for m in M):
        idx = [i for i, m in enumerate(M) if m.shape == shape]
        _, seqs = sample_best([net], np.stack([M[i] for i in idx]), np.stack([D[i] for i in idx]), samples, [seed])
        for i, seq in zip(idx, seqs[0]):
            start, ms = schedule(M[i], D[i], seq)
            out[i] = {"makespan": ms, "sequence": seq.tolist(), "start": start.tolist()}
    return pd.DataFrame(out, columns=["makespan", "sequence", "start"])
