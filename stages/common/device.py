"""Device selection: ``auto`` picks CUDA when present, else CPU. No code path needs a GPU."""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys


def select_device(requested: str = "auto"):
    import torch

    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if requested == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("common.device = 'cuda' but no CUDA device is available; use 'auto' or 'cpu'")
    return torch.device(requested)


def cores_given() -> int:
    """The cores this process may use: ``$OMP_NUM_THREADS`` when set (the flow sets it to its share
    of the cores when stages run side by side; a user may set it too), else every core the
    process may run on (its CPU affinity, which ``taskset`` and container limits narrow)."""
    import os

    env = os.environ.get("OMP_NUM_THREADS") or os.environ.get("OPENBLAS_NUM_THREADS")
    if env and env.strip().isdigit() and int(env) >= 1:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def limit_threads(default: int = 1) -> int:
    """Cap torch's intra-op threads and the BLAS pools (numpy/scipy, via threadpoolctl) at
    ``min(default, cores_given())``; returns the cap.

    ``default`` is what the stage would use on its own: one thread unless it asks for more.
    The small dense problems here (matrices of a few thousand rows) gain little from a second
    core on an idle 2-core machine and run 3-20x slower when another process holds it
    (measured: 2500 full-batch steps, V = 400, 2.3 s with one thread vs 46 s with two beside a
    busy core; 1024 x 1024 eigendecompositions 3-8x slower). A stage whose work is large enough
    to gain from more cores (a CNN's convolutions) passes its own default. It never gets more
    than the cores it is given (:func:`cores_given`): under plain ``dvc repro`` all of them,
    under the flow its share, so stages running side by side do not oversubscribe the machine.
    The BLAS cap stays for the life of the process (stages are one process each).

    torch is not imported here (1-3 s on 2 cores, for stages that never use it): when it is
    not loaded yet, its cap is applied the moment something imports it.
    """
    global _APPLIED
    if default < 1:
        raise ValueError(f"limit_threads: default must be >= 1, got {default}")
    n = min(default, cores_given())
    import numpy  # noqa: F401  - load the BLAS builds (numpy's and scipy's) before capping them
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=n, user_api="blas")
    _torch_threads(n)
    _APPLIED = n
    return n


_APPLIED: int | None = None


def threads_applied() -> int | None:
    """The cap the last :func:`limit_threads` call applied in this process (None: never called)."""
    return _APPLIED


def _torch_threads(n: int) -> None:
    """``torch.set_num_threads(n)`` now if torch is loaded, else right after it is imported."""
    global _TORCH_CAP
    _TORCH_CAP = n
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
    elif not any(isinstance(f, _CapTorchOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _CapTorchOnImport())


_TORCH_CAP: int | None = None


class _CapTorchOnImport(importlib.abc.MetaPathFinder):
    """An import hook for torch: finds it the usual way, and caps its threads once it has loaded,
    before the importer gets it. It stays in place until torch has actually loaded, since a mere
    probe (``importlib.util.find_spec("torch")``, which ``datasets`` runs when it is imported) also
    asks the finders, and each spec gets a loader of its own."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)                 # the real finders, not this one again
        try:
            spec = importlib.util.find_spec("torch")
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:  # pragma: no cover - torch is a dependency
            return spec
        run_module = spec.loader.exec_module

        def exec_module(module):
            run_module(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            if _TORCH_CAP is not None:
                module.set_num_threads(_TORCH_CAP)

        spec.loader.exec_module = exec_module
        return spec
