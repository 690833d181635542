"""map_isolated: results in order, computed in other processes; and the clash it exists for."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from stages.common.isolated import map_isolated


def _pid_and_square(x: int) -> tuple[int, int]:
    return os.getpid(), x * x


def test_results_come_in_order_from_other_processes():
    out = map_isolated(_pid_and_square, range(7), workers=2)
    assert [sq for _, sq in out] == [x * x for x in range(7)]
    assert os.getpid() not in {pid for pid, _ in out}
    assert map_isolated(_pid_and_square, [], workers=2) == []


def test_bad_worker_count():
    with pytest.raises(ValueError, match="workers must be >= 1, got 0"):
        map_isolated(_pid_and_square, [1], workers=0)


def test_ortools_and_highspy_cannot_share_a_process():
    """Why map_isolated exists. When a pin change lets them share a process, this fails: then
    OR-Tools may be imported directly again."""
    code = "from ortools.sat.python import cp_model\nimport highspy\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode != 0 and "undefined symbol" in r.stderr
