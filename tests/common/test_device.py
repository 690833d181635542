"""limit_threads: $OMP_NUM_THREADS wins; unset, the stage's default (one unless it asks)."""
from __future__ import annotations

import pytest
import torch

from stages.common.device import limit_threads, select_device


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("env, default, expected", [(None, 1, 1), (None, 2, 2), ("1", 2, 1), ("2", 1, 2)])
def test_env_wins_over_the_stage_default(monkeypatch, restore_threads, env, default, expected):
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    if env is not None:
        monkeypatch.setenv("OMP_NUM_THREADS", env)
    assert limit_threads(default=default) == expected
    assert torch.get_num_threads() == expected


def test_bad_default_and_device_errors():
    with pytest.raises(ValueError, match="default must be >= 1, got 0"):
        limit_threads(default=0)
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="no CUDA device"):
            select_device("cuda")
    assert select_device("cpu") == torch.device("cpu")
