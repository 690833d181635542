"""stages.common.forkpool: forked workers whose SIGTERM is the default action, so Pool's exit ends
them even when the stage's raising handler is installed and a worker runs a second thread; and the
stage's handler itself (stages.common.runtime.stage._raise_on_sigterm), which ends a forked process
by the default action, so a worker terminated before its pool's initializer ran dies too."""
from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from stages.common.forkpool import default_sigterm, fork_pool
from stages.common.runtime.stage import _raise_on_sigterm

from tests.helpers import REPO


def _handler_here(_):
    return signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_workers_get_the_default_sigterm_back():
    before = signal.signal(signal.SIGTERM, _raise_on_sigterm)     # the stage runner's
    try:
        with fork_pool(2) as pool:
            assert pool.map(_handler_here, range(4)) == [True] * 4
    finally:
        signal.signal(signal.SIGTERM, before)
    default_sigterm()          # in this process too: what the initializer does
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    signal.signal(signal.SIGTERM, before)


SCRIPT = r'''
import multiprocessing, signal, socket, sys, threading
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


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script, *args], cwd=REPO, capture_output=True, text=True, timeout=120)


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


SLOW_START = r'''
import multiprocessing, os, signal, sys, threading, time
from stages.common.forkpool import fork_pool
from stages.common.runtime.stage import _raise_on_sigterm

def plain_raising(signum, frame):
    raise SystemExit("terminated")

handler, pool_kind, when = sys.argv[1:]
signal.signal(signal.SIGTERM, _raise_on_sigterm if handler == "stage" else plain_raising)
POOL = fork_pool if pool_kind == "fork_pool" else multiprocessing.get_context("fork").Pool
# workers slow to start: each sleeps 2 s in this hook, before its pool's initializer has run, with
# the parent's handler still in place (terminate() comes well within that); it first says so on a pipe
r, w = os.pipe()
os.register_at_fork(after_in_child=lambda: (os.write(w, b"1"), time.sleep(2)))
pool = POOL(2)
workers = list(pool._pool)
if when == "started":            # both are in the hook: Python runs in them
    got = b""
    while len(got) < 2:
        got += os.read(r, 2 - len(got))
ender = threading.Thread(target=pool.terminate, daemon=True)     # it reaps the workers
ender.start()
ender.join(timeout=4)                                           # alive after 4 s: the pool hangs
print(sorted(str(p.exitcode) for p in workers), flush=True)
for p in workers:               # the survivors
    if p.exitcode is None:
        p.kill()
        p.join()
os._exit(0)
'''


@pytest.mark.parametrize("handler,pool,when,expected", [
    ("stage", "plain", "started", "['-15', '-15']"),
    ("stage", "fork_pool", "at_once", "['-15', '-15']"),
    ("raising", "plain", "started", "['None', 'None']"),       # the control: a handler that only raises
])
def test_a_worker_terminated_before_its_initializer_still_dies(handler, pool, when, expected):
    """Workers terminated while they still have the parent's handler, slow to start (each sleeps in
    an at-fork hook): once both are known to run Python (``started``), or the moment the pool exists
    (``at_once``). The stage's handler ends a forked process by SIGTERM's default action. A handler
    that raises SystemExit there is swallowed ("Exception ignored" in the hook), and the worker lives
    on, waiting for work the pool will never send (the hang seen in the test suite): the pool's
    terminate() is still waiting for both after 4 s."""
    out = _run(SLOW_START, handler, pool, when)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == expected, (out.stdout, out.stderr[-2000:])
    assert ("Exception ignored" in out.stderr) == (handler == "raising"), out.stderr[-2000:]


def test_bad_size_is_named():
    with pytest.raises(ValueError, match="processes must be >= 1"):
        fork_pool(0)
