"""The sandbox (stages/common/sandbox.py) against the ways out that the audit-hook "sandbox" it
replaces let through: a shell subprocess, ``os.system`` and ``os.rename`` changing host files, a
child process's socket reaching a host server, a fork bomb; and the limits (CPU, memory, file
size, processes), the environment and what is left behind. Every check is made from the host
side: what the host sees after the run, not what the sandboxed code says about itself."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from stages.common import sandbox
from tests.helpers import require_sandbox


@pytest.fixture(autouse=True)
def _bwrap():
    require_sandbox()


def py(code: str, **kw) -> subprocess.CompletedProcess:
    """Run Python ``code`` in the sandbox."""
    return sandbox.run([sys.executable, "-I", "-c", code], **{"timeout": 60, **kw})


@pytest.fixture
def host(tmp_path):
    """A host folder the sandbox is shown read-only, with a file in it."""
    d = tmp_path / "host"
    d.mkdir()
    (d / "secret.txt").write_text("keep me")
    return d


def listing(d) -> dict:
    return {p.name: p.read_text() for p in sorted(d.iterdir())}


def test_a_snippet_runs_and_its_output_comes_back():
    res = py("import os, yaml; print(os.getcwd(), yaml.safe_load('a: 1'))")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["/tmp", "{'a':", "1}"]


def test_shell_system_and_rename_cannot_change_host_files(host):
    before = listing(host)
    code = f"""
import os, subprocess
h = {str(host)!r}
subprocess.run('echo leak > ' + h + '/shell.txt', shell=True)
os.system('echo leak > ' + h + '/system.txt; rm -f ' + h + '/secret.txt')
for step in (lambda: os.rename(h + '/secret.txt', h + '/moved.txt'),
             lambda: open(h + '/secret.txt', 'w').write('changed'),
             lambda: open('/usr/leak.txt', 'w')):
    try:
        step()
    except OSError as exc:
        print(type(exc).__name__, exc.errno)
open('private.txt', 'w').write('fine')          # its own /tmp is writable
print(open(h + '/secret.txt').read())           # the host file can be read where bound
"""
    res = py(code, binds=(host,))
    assert res.returncode == 0, res.stderr
    assert listing(host) == before
    assert res.stdout.splitlines()[-1] == "keep me"
    assert res.stdout.count("OSError 30") == 3        # EROFS, the filesystem is read-only


def test_a_child_process_socket_does_not_reach_a_host_server():
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        srv.settimeout(3)
        port = srv.getsockname()[1]
        code = (f"import subprocess, sys\n"
                f"r = subprocess.run([sys.executable, '-c', 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=2)'],"
                f" capture_output=True, text=True)\nprint(r.returncode, r.stderr.strip().splitlines()[-1])")
        res = py(code)
        with pytest.raises(TimeoutError):
            srv.accept()
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("1 ") and ("unreachable" in res.stdout or "refused" in res.stdout), res.stdout


def test_the_environment_does_not_come_through(monkeypatch):
    monkeypatch.setenv("CLAIMBENCH_SECRET", "hunter2")
    res = py("import os, json; print(json.dumps(dict(os.environ)))")
    env = json.loads(res.stdout)
    assert "CLAIMBENCH_SECRET" not in env and set(env) <= {"PATH", "LC_ALL", "PYTHONHASHSEED", "PWD"}


def test_it_runs_as_a_user_without_capabilities():
    res = py("print(open('/proc/self/status').read())")
    status = dict(line.split(":", 1) for line in res.stdout.splitlines() if ":" in line)
    assert int(status["CapEff"].strip(), 16) == 0
    assert int(status["Uid"].split()[0]) == (sandbox.NOBODY if os.geteuid() == 0 else os.geteuid())


def test_a_fork_bomb_stops_at_the_process_limit_and_leaves_nothing():
    uid = sandbox.NOBODY if os.geteuid() == 0 else os.geteuid()
    before = sandbox.tasks_of(uid)
    counted = py("import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n"
                 "            time.sleep(60)\n            os._exit(0)\n        n += 1\nexcept OSError:\n    print(n)",
                 limits=sandbox.Limits(processes=16))
    assert counted.returncode == 0, counted.stderr
    assert 0 < int(counted.stdout) < 16                 # the sandbox's own processes count too
    t0 = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):      # the classic bomb: every process forks forever
        py("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
           timeout=3, limits=sandbox.Limits(processes=16))
    for _ in range(50):                                 # the namespace dies with its init
        if sandbox.tasks_of(uid) <= before:
            break
        time.sleep(0.1)
    assert sandbox.tasks_of(uid) <= before, "processes of the fork bomb outlived the sandbox"
    assert time.monotonic() - t0 < 15


def test_cpu_memory_and_file_size_limits():
    cpu = py("while True:\n    pass", limits=sandbox.Limits(cpu_s=1))
    assert cpu.returncode == -9 or cpu.returncode in (128 + 9, 128 + 24, -24), cpu.returncode   # SIGXCPU / SIGKILL
    mem = py("b = bytearray(512 << 20)", limits=sandbox.Limits(memory_mb=256))
    assert mem.returncode != 0 and "MemoryError" in mem.stderr
    big = py("open('big', 'wb').write(b'x' * (4 << 20))", limits=sandbox.Limits(file_mb=1))
    assert big.returncode != 0
    full = py("f = open('a', 'wb')\nfor _ in range(16):\n    f.write(b'x' * (1 << 20))\n    f.flush()",
              limits=sandbox.Limits(tmp_mb=4))
    assert full.returncode != 0 and "No space left" in full.stderr


def test_nothing_is_left_behind_on_the_host():
    tmp = tempfile.gettempdir()
    before = set(os.listdir(tmp))
    res = py("import tempfile, os\nd = tempfile.mkdtemp()\nopen(os.path.join(d, 'x'), 'w').write('x')\nprint(d)")
    assert res.returncode == 0, res.stderr
    assert set(os.listdir(tmp)) - before == set()


def test_a_missing_bubblewrap_is_named_with_what_to_install(monkeypatch):
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    with pytest.raises(sandbox.SandboxUnavailable, match="apt-get install bubblewrap"):
        py("print(1)")
    assert "not installed" in sandbox.available()


def test_limits_must_be_positive_integers():
    with pytest.raises(ValueError, match="cpu_s, processes"):
        sandbox.Limits(cpu_s=0, processes=-1)
