"""Fixtures of the diff_purify tests."""
from __future__ import annotations

import pytest



@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """The small MLPs here run far slower on two threads of a shared 2-core machine."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
