"""Run code we did not write (a model's answers) in real isolation: a child process under
bubblewrap (``bwrap``, Debian's package ``bubblewrap``), with resource limits.

What the child gets (:func:`bwrap_argv`):

* no network: its own network namespace, where only a loopback that is down exists;
* its own pid, IPC and UTS namespaces; it dies with its parent, and everything it started dies
  with it (bubblewrap's init is pid 1 of the namespace);
* a filesystem of read-only binds only: ``/usr`` (and the ``/bin``, ``/lib`` links of a merged-usr
  system), the Python installation that runs us (its base prefix and the virtual environment) and
  the files the caller names; fresh ``/proc`` and ``/dev``; the one writable place is a private
  tmpfs at ``/tmp`` (its working folder, capped in size), gone when the child ends, so nothing is
  left on the host's disk;
* an empty environment but ``PATH``, ``LC_ALL`` and ``PYTHONHASHSEED``;
* a user that owns nothing: when we run as root the child drops to ``nobody`` (``setpriv``)
  before it starts, and otherwise it is our own user without any capability;
* limits (:class:`Limits`, set with ``setrlimit`` before bubblewrap starts and inherited by every
  process inside): CPU seconds per process, address space per process, the largest file it may
  write, and the number of processes its user may have (counted from the processes that user has
  on the host when the sandbox starts, so a fork bomb stops at ``processes`` more).

The caller's own wall-clock timeout kills the whole sandbox. :func:`available` says whether
bubblewrap works here; :func:`run` raises :class:`SandboxUnavailable` with what to install when it
does not.
"""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

NOBODY = 65534
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: "
                "`sudo dnf install bubblewrap`)")


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create its namespaces on this machine."""


@dataclass(frozen=True)
class Limits:
    cpu_s: int = 10             # CPU seconds, each process
    memory_mb: int = 1024       # address space, each process
    file_mb: int = 16           # the largest file a process may write
    tmp_mb: int = 64            # the private /tmp, in all
    processes: int = 32         # processes (and threads) the sandbox's user may add

    def __post_init__(self):
        bad = [k for k, v in vars(self).items() if not isinstance(v, int) or v < 1]
        if bad:
            raise ValueError(f"sandbox limits must be positive integers: {', '.join(bad)}")


def _ancestors(path: Path) -> list[Path]:
    """The folders above ``path`` (outermost first), not ``/``."""
    return list(reversed(path.parents))[1:]


def bwrap_argv(argv: list[str], limits: Limits, binds: tuple[Path, ...] = ()) -> list[str]:
    """The bubblewrap command that runs ``argv`` as described in the module's docstring."""
    out = ["bwrap", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
           "--die-with-parent", "--new-session", "--cap-drop", "ALL",
           "--ro-bind", "/usr", "/usr"]
    for link in ("bin", "sbin", "lib", "lib64", "lib32"):
        p = Path("/") / link
        if p.is_symlink():
            out += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            out += ["--ro-bind", str(p), str(p)]
    # the private /tmp first, so that a bind below /tmp (a test's folder) shows through it
    out += ["--proc", "/proc", "--dev", "/dev",
            "--perms", "1777", "--size", str(limits.tmp_mb << 20), "--tmpfs", "/tmp"]
    made: set[Path] = {Path("/tmp")}
    bound: list[Path] = [Path("/usr")]
    for src in (Path(sys.base_prefix), Path(sys.prefix), *binds):
        src = src.resolve()
        if any(src == b or src.is_relative_to(b) for b in bound):
            continue                    # already visible through a folder bound before
        for d in _ancestors(src):      # bubblewrap makes missing folders 0700; nobody must pass them
            if d not in made:
                out += ["--perms", "0755", "--dir", str(d)]
                made.add(d)
        out += ["--ro-bind", str(src), str(src)]
        bound.append(src)
    out += ["--chdir", "/tmp", "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "LC_ALL", "C.UTF-8",
            "--setenv", "PYTHONHASHSEED", "0"]
    if os.geteuid() == 0:
        # setpriv needs these two to change user; changing away from root clears every capability
        out += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--",
                "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
    else:
        out += ["--"]
    return out + list(argv)


def tasks_of(uid: int) -> int:
    """Processes and threads that ``uid`` has on this machine now (what RLIMIT_NPROC counts)."""
    n = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = dict(line.split(":", 1) for line in Path(entry.path, "status").read_text().splitlines()
                          if line.startswith(("Uid:", "Threads:")))
        except (OSError, ValueError):
            continue                    # it ended while we looked
        if int(fields["Uid"].split()[0]) == uid:
            n += int(fields["Threads"])
    return n


def _limit(limits: Limits, uid: int):
    nproc = tasks_of(uid) + limits.processes

    def apply() -> None:
        for what, value in ((resource.RLIMIT_CPU, limits.cpu_s), (resource.RLIMIT_AS, limits.memory_mb << 20),
                            (resource.RLIMIT_FSIZE, limits.file_mb << 20), (resource.RLIMIT_NPROC, nproc),
                            (resource.RLIMIT_CORE, 0)):
            resource.setrlimit(what, (value, value))
    return apply


def available() -> str | None:
    """None when bubblewrap runs here; otherwise why not, and what to install."""
    if shutil.which("bwrap") is None:
        return f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "setpriv (util-linux) is missing: the sandbox cannot drop root"
    try:
        res = subprocess.run(bwrap_argv(["true"], Limits()), capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap failed to start: {exc}"
    if res.returncode != 0:
        return (f"bubblewrap cannot make its namespaces here (exit {res.returncode}: {res.stderr.strip()[-300:]}); "
                "unprivileged user namespaces may be off (sysctl kernel.unprivileged_userns_clone)")
    return None


def run(argv: list[str], *, stdin: str = "", timeout: float, limits: Limits = Limits(),
        binds: tuple[Path, ...] = ()) -> subprocess.CompletedProcess:
    """Run ``argv`` in the sandbox with ``stdin``; (exit status, stdout, stderr) as text.

    ``binds``: host files or folders the child may read (at the same paths). The sandbox is killed
    after ``timeout`` seconds of wall time (``subprocess.TimeoutExpired``)."""
    if shutil.which("bwrap") is None:
        raise SandboxUnavailable(f"this stage runs generated code under bubblewrap, which is not installed: {INSTALL_HINT}")
    uid = NOBODY if os.geteuid() == 0 else os.geteuid()
    res = subprocess.run(bwrap_argv(argv, limits, binds), input=stdin, capture_output=True, text=True,
                         timeout=timeout, preexec_fn=_limit(limits, uid), env={"PATH": "/usr/bin:/bin"})
    if res.returncode != 0 and res.stderr.startswith("bwrap:"):
        raise SandboxUnavailable(f"bubblewrap could not start the sandbox: {res.stderr.strip()[-300:]}")
    return res
