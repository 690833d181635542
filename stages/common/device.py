"""Device selection: ``auto`` picks CUDA when present, else CPU. No code path needs a GPU."""
from __future__ import annotations


def select_device(requested: str = "auto"):
    import torch

    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if requested == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("common.device = 'cuda' but no CUDA device is available; use 'auto' or 'cpu'")
    return torch.device(requested)


def limit_threads(default: int = 1) -> int:
    """Cap torch's intra-op threads and the BLAS pools (numpy/scipy, via threadpoolctl) at
    $OMP_NUM_THREADS, or at ``default`` threads (one unless a stage asks for more) when it is
    unset; returns the cap.

    The flow sets OMP_NUM_THREADS per stage (a share of the cores when branches run side by
    side). Unset, one thread: the small dense problems here (matrices of a few thousand rows)
    gain little from a second core on an idle 2-core machine and run 3-20x slower when another
    process holds it (measured: 2500 full-batch steps, V = 400, 2.3 s with one thread vs 46 s
    with two beside a busy core; 1024 x 1024 eigendecompositions 3-8x slower). A stage whose
    work is large enough to gain from more cores (a CNN's convolutions) passes its own default.
    The BLAS cap stays for the life of the process (stages are one process each).
    """
    if default < 1:
        raise ValueError(f"limit_threads: default must be >= 1, got {default}")
    import os

    n = max(1, int(os.environ.get("OMP_NUM_THREADS") or os.environ.get("OPENBLAS_NUM_THREADS") or default))
    import numpy  # noqa: F401  - load the BLAS builds (numpy's and scipy's) before capping them
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=n, user_api="blas")
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return n
    torch.set_num_threads(n)
    return n
