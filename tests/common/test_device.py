"""limit_threads: the stage's default (one unless it asks), never more than the cores it is given:
$OMP_NUM_THREADS when set (the flow's share), else the cores the process may run on."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from stages.common.device import cores_given, limit_threads, select_device, threads_applied


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


CORES = len(os.sched_getaffinity(0))


@pytest.mark.parametrize("env, default, expected", [
    (None, 1, 1), (None, 2, min(2, CORES)), (None, 10_000, CORES),    # unset: every core, no more
    ("1", 2, 1), ("2", 1, 1), ("3", 8, 3), ("junk", 1, 1)])             # set: a cap, not a floor
def test_threads_are_the_default_capped_at_the_cores_given(monkeypatch, restore_threads, env, default, expected):
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    if env is not None:
        monkeypatch.setenv("OMP_NUM_THREADS", env)
    assert cores_given() == (int(env) if env and env.isdigit() else CORES)
    assert limit_threads(default=default) == expected
    assert torch.get_num_threads() == expected
    assert threads_applied() == expected


def test_bad_default_and_device_errors():
    with pytest.raises(ValueError, match="default must be >= 1, got 0"):
        limit_threads(default=0)
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="no CUDA device"):
            select_device("cuda")
    assert select_device("cpu") == torch.device("cpu")



def test_a_stage_that_never_uses_torch_does_not_import_it_and_a_later_import_is_capped():
    """limit_threads leaves torch unimported (seconds of a stage's start); when the stage does
    import it later, the cap is already on (unset, torch would take this machine's core count)."""
    code = (
        "import sys; from stages.common.device import limit_threads\n"
        "limit_threads(default=1); assert 'torch' not in sys.modules\n"
        "import importlib.util; assert importlib.util.find_spec('torch')   # a probe, as datasets makes\n"
        "import datasets  # noqa\n"
        "import torch; print(torch.get_num_threads())\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=Path(__file__).resolve().parents[2], check=True)
    assert out.stdout.strip() == "1"
