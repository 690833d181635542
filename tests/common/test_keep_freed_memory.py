"""keep_freed_memory: freed buffers are reused, not mapped afresh (page faults fall), values unchanged."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CODE = """
import resource, sys
import numpy as np
from stages.common.runtime.stage import keep_freed_memory
tuned = keep_freed_memory() if sys.argv[1] == "1" else None
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
total = 0.0
for i in range(100):                       # a step's buffers (5 x 4 MB), freed and made again
    bufs = [np.full(500_000, float(i + k)) for k in range(5)]
    total += sum(b[::1000].sum() for b in bufs)
    del bufs
print(tuned, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, total)
"""


def _faults(tuned: bool) -> tuple[str, int, str]:
    out = subprocess.run([sys.executable, "-c", CODE, "1" if tuned else "0"], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[2]).stdout.split()
    return out[0], int(out[1]), out[2]


def test_freed_buffers_are_reused_and_results_unchanged():
    flag, tuned, total_tuned = _faults(True)
    if flag != "True":
        pytest.skip("not glibc: keep_freed_memory changes nothing here")
    _, plain, total_plain = _faults(False)
    assert total_tuned == total_plain
    # untuned, the freed heap top (20 MB) is handed back each step and faults in again (~5000
    # pages a step); tuned, the first step's pages are reused
    assert plain > 100_000 and tuned < plain / 20, (plain, tuned)
