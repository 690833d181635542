"""Fixtures of the dyna_rend tests."""
from __future__ import annotations


import pytest


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """These tests' tensors are tiny: one torch thread (two spin-wait against a busy core), restored after."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
