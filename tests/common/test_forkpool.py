"""stages.common.forkpool: forked workers whose SIGTERM is the default action, so Pool's exit ends
them even when the stage's raising handler is installed and a worker runs a second thread."""
from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from stages.common.forkpool import default_sigterm, fork_pool

from tests.helpers import REPO


def _handler_here(_):
    return signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_workers_get_the_default_sigterm_back():
    def raising(signum, frame):  # as the stage runner's
        raise SystemExit("terminated")

    before = signal.signal(signal.SIGTERM, raising)
    try:
        with fork_pool(2) as pool:
            assert pool.map(_handler_here, range(4)) == [True] * 4
    finally:
        signal.signal(signal.SIGTERM, before)
    default_sigterm()          # in this process too: what the initializer does
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    signal.signal(signal.SIGTERM, before)


SCRIPT = r'''
import multiprocessing, signal, socket, sys, threading, time
from stages.common.forkpool import fork_pool
POOL = fork_pool if sys.argv[1] == "fork_pool" else multiprocessing.get_context("fork").Pool

def raising(signum, frame):
    raise SystemExit("terminated")

def work(i):
    # a second thread blocked in accept (torch's tensor sharer does this in a worker)
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
    threading.Thread(target=s.accept, daemon=True).start()
    return i * i

signal.signal(signal.SIGTERM, raising)
for _ in range(5):
    with POOL(2) as pool:
        assert pool.map(work, range(6), chunksize=1) == [i * i for i in range(6)]
print("ok")
'''

BUSY = r'''
import multiprocessing, signal, sys, time
from stages.common.forkpool import fork_pool
POOL = fork_pool if sys.argv[1] == "fork_pool" else multiprocessing.get_context("fork").Pool
STARTED = multiprocessing.get_context("fork").Value("i", 0)

def raising(signum, frame):
    raise SystemExit("terminated")

def busy(i):
    with STARTED.get_lock():
        STARTED.value += 1
    time.sleep(60)

signal.signal(signal.SIGTERM, raising)
pool = POOL(2)
workers = list(pool._pool)
pool.map_async(busy, range(2), chunksize=1)
deadline = time.monotonic() + 30
while STARTED.value < 2:
    assert time.monotonic() < deadline, "workers never started"
    time.sleep(0.01)
pool.terminate()
pool.join()
print(sorted(w.exitcode for w in workers))
'''


def _run(script: str, pool: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script, pool], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_pool_exit_with_a_second_thread_in_each_worker_does_not_hang():
    """Pool's exit with workers that each run a second thread blocked in accept (as torch's tensor
    sharer in autoopt-m1-train's workers): fork_pool's workers never run the stage's raising handler."""
    out = _run(SCRIPT, "fork_pool")
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
    assert "terminated" not in out.stderr, out.stderr[-2000:]


@pytest.mark.parametrize("pool", ["fork_pool", "plain"])
def test_terminate_ends_busy_workers_by_the_default_action(pool):
    """Workers busy in a task when the pool is terminated: fork_pool's die of SIGTERM's default
    action (exit code -15, nothing printed); a plain fork pool's run the inherited raising handler
    instead (SystemExit, printed, exit code 1), the path on which a worker whose signal lands on
    another thread can hang the pool. (Terminating idle workers would race the pool's own None
    sentinels, on which they exit before any signal is sent.)"""
    out = _run(BUSY, pool)
    assert out.returncode == 0, out.stderr[-2000:]
    expected = "[-15, -15]" if pool == "fork_pool" else "[1, 1]"
    assert out.stdout.strip() == expected, (out.stdout, out.stderr[-2000:])
    assert ("terminated" in out.stderr) == (pool == "plain"), out.stderr[-2000:]


def test_bad_size_is_named():
    with pytest.raises(ValueError, match="processes must be >= 1"):
        fork_pool(0)
