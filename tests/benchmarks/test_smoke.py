"""Every benchmark script runs at its ``--smoke`` size (tiny inputs, seconds, no stage outputs
needed), so a rename or a changed signature in the code it measures fails here, not the day
someone runs the benchmark. The figures a smoke run prints mean nothing; that it finishes does.

The scripts are short processes that spend much of their time importing torch and the study's
modules, so they run two at a time (:data:`WORKERS`, one math thread each), all queued when the
first test asks; each test waits for its own script. Scripts that call DVC on this checkout take turns (DVC locks the
repository). That no script changed files in the checkout is checked once, after all of them
ran (two running side by side cannot be told apart), by the last test of this file."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.helpers import REPO

SCRIPTS = sorted(p for p in (REPO / "benchmarks").rglob("*.py")        # scripts, not helper modules
                 if p.name != "report.py" and 'if __name__ == "__main__"' in p.read_text())
SMOKE_S = 300          # a smoke run takes seconds (a pipeline one a minute); this only stops one that hangs
WORKERS = max(1, min(2, os.cpu_count() or 1))
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
IDS = [p.relative_to(REPO / "benchmarks").with_suffix("").as_posix() for p in SCRIPTS]


def _uses_dvc(script: Path) -> bool:
    text = script.read_text()
    return '"dvc"' in text or "'dvc'" in text or "import dvc" in text or "from dvc" in text


def _status() -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout


class SmokeRuns:
    """Every script's ``--smoke`` run, queued at once on :data:`WORKERS` threads (each its own
    process and TMPDIR); ``result(script)`` waits for one."""

    def __init__(self, scripts: list[Path], workers: int):
        self.status_before = _status()
        self._tmp = tempfile.TemporaryDirectory(prefix="bench-smoke-")
        self._dvc = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bench-smoke")
        self._runs: dict[Path, Future] = {s: self._pool.submit(self._run, s, i) for i, s in enumerate(scripts)}

    def _run(self, script: Path, i: int) -> subprocess.CompletedProcess:
        tmp = Path(self._tmp.name) / str(i)
        tmp.mkdir()
        # one thread each: two torch processes with two OpenMP threads apiece on two cores spin
        # against each other (a small convolution was seen 30x slower that way)
        env = {**os.environ, "TMPDIR": str(tmp), **{v: "1" for v in THREAD_VARS}}
        with self._dvc if _uses_dvc(script) else contextlib.nullcontext():
            return subprocess.run([sys.executable, str(script), "--smoke"], cwd=REPO, env=env,
                                  capture_output=True, text=True, timeout=SMOKE_S)

    def result(self, script: Path) -> subprocess.CompletedProcess:
        return self._runs[script].result()

    def wait_all(self) -> None:
        for f in self._runs.values():
            f.exception()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._tmp.cleanup()


@pytest.fixture(scope="module")
def smoke_runs(request):
    """The runs of the scripts whose tests this session selected (``-k``, a node id), queued at once."""
    chosen = {item.callspec.params["script"] for item in request.session.items
              if item.originalname == "test_a_benchmark_runs_at_its_smoke_size" and hasattr(item, "callspec")}
    runs = SmokeRuns([s for s in SCRIPTS if s in chosen], WORKERS)
    yield runs
    runs.close()


@pytest.mark.benchmark
@pytest.mark.parametrize("script", SCRIPTS, ids=IDS)
def test_a_benchmark_runs_at_its_smoke_size(script, smoke_runs):
    res = smoke_runs.result(script)
    assert res.returncode == 0, f"{script.relative_to(REPO)} --smoke exited {res.returncode}:\n{res.stderr[-2000:]}"
    assert res.stdout.strip(), f"{script.relative_to(REPO)} --smoke printed nothing"


@pytest.mark.benchmark
def test_no_benchmark_changed_files_in_the_checkout(smoke_runs):
    smoke_runs.wait_all()
    after = _status()
    changed = sorted(set(after.splitlines()) ^ set(smoke_runs.status_before.splitlines()))
    assert not changed, f"a benchmark's --smoke run changed files in the checkout: {changed}"


def test_every_benchmark_offers_a_smoke_size():
    lacking = [p.relative_to(REPO).as_posix() for p in SCRIPTS if "--smoke" not in p.read_text()]
    assert not lacking, f"benchmarks without a --smoke option: {lacking}"


def test_the_runner_reports_a_failing_script_and_the_dvc_users_take_turns(tmp_path):
    """The runner itself: a script that exits 3 comes back with its exit status and stderr, and
    two scripts that use DVC never overlap (each writes its start and end times)."""
    import json

    ok = tmp_path / "ok.py"
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nsys.stderr.write('boom')\nsys.exit(3)\n")
    ok.write_text("print('fine')\n")
    stamps = []
    for k in range(2):
        s = tmp_path / f"dvc_user{k}.py"
        out = tmp_path / f"stamp{k}.json"
        s.write_text("import json, time\ncmd = ['dvc']\nt0 = time.time(); time.sleep(0.3)\n"
                     f"open({str(out)!r}, 'w').write(json.dumps([t0, time.time()]))\nprint('ok')\n")
        stamps.append((s, out))
    runs = SmokeRuns([ok, bad] + [s for s, _ in stamps], workers=2)
    try:
        assert runs.result(ok).stdout.strip() == "fine"
        res = runs.result(bad)
        assert res.returncode == 3 and res.stderr == "boom"
        runs.wait_all()
    finally:
        runs.close()
    (a0, a1), (b0, b1) = (json.loads(out.read_text()) for _, out in stamps)
    assert a1 <= b0 or b1 <= a0, "two DVC users ran side by side"
