"""The program that runs purpcode's unit tests inside the sandbox (stages/common/sandbox.py:
bubblewrap, no network, read-only filesystem but a private /tmp, resource limits). Started by
:func:`stages.purpcode.oracle.run_tests`, never imported by the stages.

It reads ``{"items": [[source, test_body], ...], "timeout": seconds}`` on stdin and prints one JSON
list of booleans (test passed) on stdout. A stand-in ``requests`` module answers
``get(url, ...)`` with ``"GET " + url`` (the sandbox has no network). Each snippet runs in a child
process of its own (forked, in a session of its own), so a snippet cannot change what the next one
sees; the child reports through a pipe, and when it has not answered within ``timeout`` seconds
it and every process of its session are killed. Any exception, a failed assertion, a crash or the
timeout fails the snippet.
"""
import json
import os
import select
import signal
import sys
import time
import types


def _fake_requests():
    mod = types.ModuleType("requests")

    class Response:
        def __init__(self, text):
            self.text = text

    def get(url, timeout=None, verify=True, **kwargs):
        return Response("GET " + url)

    mod.get = get
    return mod


def _child(source: str, test: str, w: int) -> None:
    """In the forked child: run the snippet and its test, write b"1" when they pass, and leave."""
    me = os.getpid()
    ok = False
    try:
        os.setsid()
        ns = {"__name__": "snippet"}
        exec(compile(source, "<snippet>", "exec"), ns)
        check = {"f": ns["f"]}
        exec(compile(test, "<test>", "exec"), check)
        ok = True
    except BaseException:          # noqa: BLE001 - anything that stops a snippet fails its test
        ok = False
    if os.getpid() == me:          # a process the snippet forked says nothing
        try:
            os.write(w, b"1" if ok else b"0")
        except OSError:
            pass
    os._exit(0)


def run_one(source: str, test: str, timeout: float) -> bool:
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:                 # no process left under the limit: the snippet cannot run
        os.close(r)
        os.close(w)
        return False
    if pid == 0:
        os.close(r)
        _child(source, test, w)
    os.close(w)
    deadline = time.monotonic() + timeout
    answer = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([r], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            answer = os.read(r, 1)
            break
    os.close(r)
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()                # the snippet's session: what it forked goes too
        except (ProcessLookupError, PermissionError):
            pass
    os.waitpid(pid, 0)
    return answer == b"1"


def main() -> None:
    job = json.loads(sys.stdin.read())
    sys.modules["requests"] = _fake_requests()
    import ast, hashlib, pickle, subprocess, yaml  # noqa: E401,F401 - loaded once, before the forks
    out = [run_one(source, test, float(job["timeout"])) for source, test in job["items"]]
    sys.stdout.write(json.dumps(out))


if __name__ == "__main__":
    main()
