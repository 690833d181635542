"""Fixtures of the llm_co_foarl tests."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="package")
def one_torch_thread():
    """One torch thread, as the stages run (stages.common.device.limit_threads), set before the
    module fixtures that train (test_seeds); restored after. With torch's default two threads on
    the shared 2-core machine a smoke SFT step took 3-10 s instead of a few milliseconds."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
