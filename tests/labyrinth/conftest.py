"""labyrinth's tests train small torch nets: one intra-op thread, as the stages run them
(stages.common.device.limit_threads). On the shared 2-core machine two OpenMP threads spin
against each other and made a 5x5 convolution 30x slower; the setting is restored afterwards."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="package")
def _one_torch_thread():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
