"""Saving a trained model as an MLflow pyfunc folder, the one way every study does it.

A study's model is "models from code": a ``pyfunc.py`` in the study folder (read by MLflow, never
pickled) plus artifacts (weights, a config). :func:`save_pyfunc` writes that folder atomically, so a
stage killed mid-save leaves the previous model in place, and the stage then logs and registers it
through ``tracking.log_model``.

It calls MLflow's public ``mlflow.pyfunc.save_model`` as it comes. That includes MLflow's check that
the running environment satisfies the model's pip requirements, which can only pass here (they are
pinned from this very environment, :func:`pinned`) and costs about 0.5 s of CPU on 2 cores the first
time a process saves a model (it maps every installed distribution to its modules, once per
process; ``benchmarks/pipeline/save_pyfunc.py``). Skipping it would take patching a private MLflow
function, which an upgrade could break silently; the cost, about 12 s over the 25 model-saving
stages of the default pipeline, is paid instead.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence


def pinned(*dists: str) -> list[str]:
    """``name==version`` for each installed distribution (``pinned("torch", "numpy")``)."""
    from importlib.metadata import version

    return [f"{d}=={version(d)}" for d in dists]


def save_pyfunc(target: str | os.PathLike, code: str | os.PathLike, artifacts: Mapping[str, str | os.PathLike],
                requirements: Sequence[str] | None = None, signature=None) -> Path:
    """Write the MLflow pyfunc model folder ``target`` (atomically): models from code ``code``, with
    ``artifacts`` (name -> file or folder, copied in) and pip ``requirements`` (default: torch and
    numpy pinned to the installed versions). ``signature`` is an optional ``ModelSignature``.
    Returns ``target``."""
    from stages.common.io import atomic_dir

    code = Path(code)
    if not code.is_file():
        raise FileNotFoundError(f"save_pyfunc: the model's code file {code} does not exist")
    missing = [f"{k}={v}" for k, v in artifacts.items() if not Path(v).exists()]
    if missing:
        raise FileNotFoundError(f"save_pyfunc: artifacts not found: {', '.join(missing)}")
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    import mlflow.pyfunc

    reqs = list(requirements) if requirements is not None else pinned("torch", "numpy")
    with atomic_dir(target) as tmp:
        tmp.rmdir()                                   # save_model wants a folder that does not exist
        mlflow.pyfunc.save_model(str(tmp), python_model=str(code),
                                 artifacts={k: str(v) for k, v in artifacts.items()},
                                 pip_requirements=reqs, signature=signature)
    return Path(target)

