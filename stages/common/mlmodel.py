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
                requirements: Sequence[str] | None = None, signature=None, *, input_example) -> Path:
    """Write the MLflow pyfunc model folder ``target`` (atomically): models from code ``code``, with
    ``artifacts`` (name -> file or folder, copied in) and pip ``requirements`` (default: torch and
    numpy pinned to the installed versions).

    ``input_example`` is what a user would pass to ``predict`` (a few real rows: a DataFrame, an
    array, or a ``(data, params)`` pair for a model that takes params). It is saved with the model,
    and unless ``signature`` (a ``ModelSignature``) is given, MLflow loads the model and runs it on
    the example to infer the signature of its inputs, outputs and params. A model without both an
    input and an output schema is refused (MLflow only warns), so every registered model shows
    what it takes and returns. Returns ``target``."""
    from stages.common.io import atomic_dir

    code = Path(code)
    if not code.is_file():
        raise FileNotFoundError(f"save_pyfunc: the model's code file {code} does not exist")
    missing = [f"{k}={v}" for k, v in artifacts.items() if not Path(v).exists()]
    if missing:
        raise FileNotFoundError(f"save_pyfunc: artifacts not found: {', '.join(missing)}")
    if input_example is None:
        raise ValueError(f"save_pyfunc: {code} needs an input_example (a few rows its predict takes)")
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    import mlflow.pyfunc
    from mlflow.models import Model

    reqs = list(requirements) if requirements is not None else pinned("torch", "numpy")
    with atomic_dir(target) as tmp:
        tmp.rmdir()                                   # save_model wants a folder that does not exist
        mlflow.pyfunc.save_model(str(tmp), python_model=str(code),
                                 artifacts={k: str(v) for k, v in artifacts.items()},
                                 pip_requirements=reqs, signature=signature, input_example=input_example)
        saved = Model.load(str(tmp)).signature
        if saved is None or saved.inputs is None or saved.outputs is None:
            raise ValueError(f"save_pyfunc: no input and output signature for {code}: MLflow could not infer "
                             f"it from the input example (its warning above says why); pass one that predict "
                             f"accepts, or a signature")
    return Path(target)
