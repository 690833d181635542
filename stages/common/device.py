"""Device selection: ``auto`` picks CUDA when present, else CPU. No code path needs a GPU."""
from __future__ import annotations


def select_device(requested: str = "auto"):
    import torch

    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if requested == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("common.device = 'cuda' but no CUDA device is available; use 'auto' or 'cpu'")
    return torch.device(requested)
