"""Every benchmark script runs at its ``--smoke`` size (tiny inputs, seconds, no stage outputs
needed), so a rename or a changed signature in the code it measures fails here, not the day
someone runs the benchmark. The figures a smoke run prints mean nothing; that it finishes does."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import REPO

SCRIPTS = sorted(p for p in (REPO / "benchmarks").rglob("*.py")        # scripts, not helper modules
                 if p.name != "report.py" and 'if __name__ == "__main__"' in p.read_text())
SMOKE_S = 120          # a smoke run takes seconds; this only stops one that hangs


@pytest.mark.benchmark
@pytest.mark.parametrize("script", SCRIPTS, ids=[p.relative_to(REPO / "benchmarks").with_suffix("").as_posix()
                                                for p in SCRIPTS])
def test_a_benchmark_runs_at_its_smoke_size(script, tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    before = _status()
    res = subprocess.run([sys.executable, str(script), "--smoke"], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=SMOKE_S)
    assert res.returncode == 0, f"{script.relative_to(REPO)} --smoke exited {res.returncode}:\n{res.stderr[-2000:]}"
    assert res.stdout.strip(), f"{script.relative_to(REPO)} --smoke printed nothing"
    assert _status() == before, f"{script.relative_to(REPO)} --smoke changed files in the checkout"


def _status() -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout


def test_every_benchmark_offers_a_smoke_size():
    lacking = [p.relative_to(REPO).as_posix() for p in SCRIPTS if "--smoke" not in p.read_text()]
    assert not lacking, f"benchmarks without a --smoke option: {lacking}"
