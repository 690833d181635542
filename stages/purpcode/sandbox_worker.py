"""The sandbox that runs purpcode's unit tests: a child process started by
:func:`stages.purpcode.oracle.run_tests`, never imported by the stages.

It reads ``{"items": [[source, test_body], ...], "timeout": seconds}`` on stdin and prints one JSON
list of booleans (test passed) on stdout. Before running anything it moves into a fresh temp
folder, puts a stand-in ``requests`` module in ``sys.modules`` (``get(url, ...)`` answers
``"GET " + url`` without a network) and installs an audit hook that refuses every socket
operation and every file opened for writing outside that folder. Each snippet runs in a fresh
namespace under a wall-clock alarm; any exception, a failed assertion or the alarm fails it.
"""
import json
import os
import signal
import sys
import tempfile
import types

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


class Blocked(Exception):
    pass


class Timeout(Exception):
    pass


def _fake_requests():
    mod = types.ModuleType("requests")

    class Response:
        def __init__(self, text):
            self.text = text

    def get(url, timeout=None, verify=True, **kwargs):
        return Response("GET " + url)

    mod.get = get
    return mod


def main() -> None:
    job = json.loads(sys.stdin.read())
    tmp = os.path.realpath(tempfile.mkdtemp(prefix="purpcode-sandbox-"))
    os.chdir(tmp)
    sys.modules["requests"] = _fake_requests()
    import ast, hashlib, json as _json, pickle, subprocess, yaml  # noqa: E401,F401 - preload before the hook

    def hook(event, args):
        if event.startswith("socket."):
            raise Blocked(f"network is off in the sandbox ({event})")
        if event == "open" and len(args) >= 3:
            path, mode, flags = args[0], args[1], args[2]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & WRITE_FLAGS)
            if writes and isinstance(path, (str, bytes)):
                p = os.path.realpath(os.fsdecode(path))
                if not (p == tmp or p.startswith(tmp + os.sep) or p == os.devnull):
                    raise Blocked(f"write outside the sandbox folder: {p}")

    sys.addaudithook(hook)

    def alarm(signum, frame):
        raise Timeout()

    signal.signal(signal.SIGALRM, alarm)
    out = []
    for source, test in job["items"]:
        ok = False
        try:
            signal.setitimer(signal.ITIMER_REAL, float(job["timeout"]))
            ns = {"__name__": "snippet"}
            exec(compile(source, "<snippet>", "exec"), ns)
            check = {"f": ns["f"]}
            exec(compile(test, "<test>", "exec"), check)
            ok = True
        except BaseException:          # noqa: BLE001 - anything that stops a snippet fails its test
            ok = False
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        out.append(ok)
    sys.stdout.write(_json.dumps(out))


if __name__ == "__main__":
    main()
