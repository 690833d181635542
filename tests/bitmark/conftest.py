"""Fixtures of the bitmark tests."""
from __future__ import annotations

import pytest



@pytest.fixture(autouse=True)
def one_torch_thread():
    """One torch thread, as the stages run (stages.common.device.limit_threads); restored after.
    Two threads on the shared 2-core machine make the 256 one-bit sampling passes ~50x slower."""
    import sys

    if "torch" not in sys.modules:
        yield
        return
    torch = sys.modules["torch"]
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
