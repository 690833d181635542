"""Fixtures of the gara_sam tests."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def one_torch_thread():
    """One torch thread while a gara_sam test runs, as its stages run (limit_threads): with two on the
    shared 2-core machine the small training test took ~10x longer in wall time. Restored after."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
