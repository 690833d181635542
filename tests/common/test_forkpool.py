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


@pytest.mark.parametrize("pool", ["fork_pool", "plain"])
def test_pool_exit_ends_workers_by_the_default_action(pool):
    """Pool's exit sends SIGTERM to every worker (each with a second thread blocked in accept, as
    torch's tensor sharer in autoopt-m1-train's workers): fork_pool's die of it at once; a plain
    fork pool's run the inherited handler instead (SystemExit, printed), the path on which a worker
    can miss the signal and hang the pool."""
    out = subprocess.run([sys.executable, "-c", SCRIPT, pool], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
    assert ("terminated" in out.stderr) == (pool == "plain"), out.stderr[-2000:]


def test_bad_size_is_named():
    with pytest.raises(ValueError, match="processes must be >= 1"):
        fork_pool(0)
