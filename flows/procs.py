"""The flow's processes: DVC (its Python API and CLI, one call at a time), the stage processes a
flow run starts (their output streamed line by line, stopped with the flow), the workspace lock,
and the DVC remote.

DVC holds a repository lock while it works, so every DVC call of a flow run goes through one
lock (:data:`DVC_LOCK`) and is retried while someone else holds DVC's own lock briefly
(tenacity).
"""
from __future__ import annotations

import os
import subprocess
import threading
import time
from collections import deque
from pathlib import Path
from typing import Callable

from tenacity import retry, retry_if_exception, retry_if_result, stop_after_attempt, wait_exponential

DVC_LOCK = threading.Lock()    # `dvc commit` / `dvc status` take DVC's repo lock: one at a time
NOT_RETRYABLE_EXIT = 2         # a stage's "bad params / bad input" status (stages.common.runtime.stage)
WORKSPACE_LOCK = ".dvc/tmp/claimbench-flow.lock"
ATTEMPTS = 6                   # DVC calls that find DVC's lock taken: 0.5, 1, 2, 4, 8 s apart


def study_of(stage_name: str) -> str:
    """The study a stage belongs to (``<study>-<step>``, ``<study>-<step>@<shard>``)."""
    return stage_name.split("-")[0]


def killed_by(returncode: int) -> int | None:
    """The signal that ended a process, from its return code (negative from Python, 128+n
    from a shell), else None."""
    if returncode < 0:
        return -returncode
    if 128 < returncode < 128 + 65:
        return returncode - 128
    return None


class StageFailed(RuntimeError):
    """A stage's command failed (an exit status, or a signal that killed it)."""

    def __init__(self, stage: str, returncode: int, tail: str):
        self.stage, self.returncode, self.tail = stage, returncode, tail
        sig = killed_by(returncode)
        why = f"killed by signal {sig}" if sig else f"exit status {returncode}"
        last = tail.strip().splitlines()[-1] if tail.strip() else ""
        super().__init__(f"stage {stage} failed ({why}){': ' + last if last else ''}")


def dvc_env() -> dict[str, str]:
    """The environment of DVC and stage processes: telemetry off, no inherited MLflow run."""
    env = dict(os.environ)
    env.setdefault("DVC_NO_ANALYTICS", "1")
    env.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    env.setdefault("DO_NOT_TRACK", "true")
    env.pop("MLFLOW_RUN_ID", None)  # it would override the parent of every stage run
    return env


def repair_rwlock(root: Path) -> bool:
    """Remove ``.dvc/tmp/rwlock`` when a killed DVC left it unreadable; True when it did.

    DVC rewrites that file in place (truncate, then write JSON) under ``rwlock.lock``; a SIGKILL
    between the two leaves it empty, and every later DVC command then fails ("Unable to read
    RWLock-file ... JSON structure is corrupted") until someone removes it (found by
    benchmarks/pipeline/fault_campaign.py). Checked again under ``rwlock.lock``, so a live DVC
    halfway through its write is never mistaken for a dead one."""
    import json

    path = Path(root) / ".dvc" / "tmp" / "rwlock"

    def corrupt() -> bool:
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return False
        except ValueError:
            return True
        return False

    if not corrupt():
        return False
    from dvc.lock import LockError, make_lock

    try:
        with make_lock(str(path.with_name("rwlock.lock")), tmp_dir=str(path.parent)):
            if not corrupt():
                return False
            path.unlink()
    except LockError:           # a live DVC is editing it: its own business
        return False
    print(f"removed {path} (left unreadable by a killed dvc process)", flush=True)
    return True


def _lock_taken(res: subprocess.CompletedProcess) -> bool:
    return res.returncode != 0 and "Unable to acquire lock" in res.stderr


@retry(retry=retry_if_result(_lock_taken), stop=stop_after_attempt(ATTEMPTS),
       wait=wait_exponential(multiplier=0.5), retry_error_callback=lambda state: state.outcome.result())
def dvc(*args: str, root: Path) -> subprocess.CompletedProcess:
    """Run a dvc command (its CLI); waits for DVC's repo lock if someone else holds it briefly."""
    with DVC_LOCK:
        repair_rwlock(root)
        return subprocess.run(["dvc", *args], cwd=root, env=dvc_env(), capture_output=True, text=True)


def _is_lock_error(exc: BaseException) -> bool:
    from dvc.lock import LockError

    return isinstance(exc, LockError)


@retry(retry=retry_if_exception(_is_lock_error), stop=stop_after_attempt(ATTEMPTS),
       wait=wait_exponential(multiplier=0.5), reraise=True)
def dvc_api(call: Callable, root: Path):
    """``call(repo)`` on a DVC ``Repo`` opened in this process: DVC's own Python API, which its
    CLI wraps. Per stage of a flow it replaces a ``dvc commit`` and a ``dvc status`` process (each
    ~0.5-1.4 s of imports and start-up on 2 cores, serial under the lock) with ~0.05-0.25 s.
    One at a time (DVC's repo lock); retried while someone else holds that lock briefly."""
    from dvc.repo import Repo

    with DVC_LOCK:
        repair_rwlock(root)
        with Repo(str(root)) as repo:
            return call(repo)


def api_target(root: Path, address: str) -> str:
    """A stage's DVC address (``name`` in the root dvc.yaml, ``file:name`` elsewhere) as DVC's API
    needs it in this process: with the file's absolute path, since the API resolves a relative one
    against this process's working folder, which is not the workspace of another profile."""
    file, _, name = address.rpartition(":")
    return f"{(Path(root) / (file or 'dvc.yaml')).resolve()}:{name}"


def up_to_date(address: str, root: Path) -> bool:
    """True when DVC finds the stage (its DVC address, ``file:name`` outside the root dvc.yaml)
    up to date."""
    name = address.split(":")[-1]
    stale = dvc_api(lambda repo: repo.status(targets=[api_target(root, address)]), root)
    return name not in {k.split(":")[-1] for k in stale}


class StageProcesses:
    """The stage processes of one flow run (pid -> stage name), so that a flow that is stopped
    (SIGTERM, a cancellation from the Prefect UI, Ctrl-C) stops them too instead of leaving them
    running; once stopping, no new one starts."""

    TAIL_LINES = 40                  # of stderr, for a failed stage's message

    def __init__(self) -> None:
        self.children: dict[int, str] = {}
        self.stopping = threading.Event()
        self._lock = threading.Lock()

    def run(self, name: str, cmd: str, root: str | Path, env: dict[str, str],
            on_line: Callable[[str], None]) -> tuple[int, str]:
        """Run ``cmd`` (a shell command) in ``root``; every line it writes to stdout or stderr is
        handed to ``on_line`` as it comes (a carriage return ends a line too, so a progress bar's
        updates arrive one by one). Returns (exit status, the last lines of its stderr)."""
        if self.stopping.is_set():
            raise StageFailed(name, NOT_RETRYABLE_EXIT, "not started: the flow is stopping")
        proc = subprocess.Popen(cmd, shell=True, cwd=root, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, bufsize=1)   # text: \r ends a line
        with self._lock:
            self.children[proc.pid] = name
        tail: deque[str] = deque(maxlen=self.TAIL_LINES)

        def pump(stream, keep: deque | None) -> None:
            for line in stream:
                line = line.rstrip("\n")
                if not line.strip():
                    continue
                if keep is not None:
                    keep.append(line)
                on_line(line)

        readers = [threading.Thread(target=pump, args=(proc.stdout, None), daemon=True),
                   threading.Thread(target=pump, args=(proc.stderr, tail), daemon=True)]
        try:
            for r in readers:
                r.start()
            for r in readers:
                r.join()
            proc.wait()
        finally:
            with self._lock:
                self.children.pop(proc.pid, None)
        return proc.returncode, "\n".join(tail)

    def stop(self, grace: float = 10.0) -> tuple[list[int], set[str]]:
        """Stop every stage process (SIGTERM, then SIGKILL after ``grace`` seconds); no new ones
        start. Returns (the pids stopped, the stages that had to be killed: they could not close
        their MLflow runs)."""
        import psutil

        from flows.stack import stop_trees

        self.stopping.set()
        roots, names = [], set()
        with self._lock:
            children = list(self.children.items())
        for pid, name in children:
            try:
                roots.append(psutil.Process(pid))
                names.add(name)
            except psutil.NoSuchProcess:
                pass
        stopped, killed = stop_trees(roots, grace)
        return stopped, names if killed else set()


def workspace_lock(root: Path):
    """The lock that lets one flow run at a time work in a checkout (taken, or RuntimeError)."""
    from filelock import FileLock, Timeout

    path = root / WORKSPACE_LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path), thread_local=False)   # taken before the flow run, released in it
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise RuntimeError(f"another pipeline flow is running in {root} (lock {WORKSPACE_LOCK}); "
                           "wait for it, or run this one in another clone") from None
    return lock


def remote_name(root: Path) -> str | None:
    """The default DVC remote's name, or None (then the flow neither pulls nor pushes)."""
    from stages.common.runtime.remote import default

    return default(root)


def pull_inputs(root: Path, addresses: list[str], remote: str) -> None:
    """``dvc pull`` what the remote has: of the given stages and everything upstream of them, or
    of the whole DAG. Missing objects are not an error (the remote may hold part of a run);
    their stages are stale afterwards and run."""
    args = ["pull", "--allow-missing", "--remote", remote]
    if addresses:
        args += ["--with-deps", *addresses]
    t0 = time.perf_counter()
    res = dvc(*args, root=root)
    if res.returncode != 0:
        raise RuntimeError(f"dvc {' '.join(args)} failed:\n{res.stderr.strip()}")
    summary = [line for line in res.stdout.splitlines() if line.strip()][-1:] or ["nothing to pull"]
    print(f"pulled from remote {remote} in {time.perf_counter() - t0:.1f} s: {summary[0].strip()}")


def push_outputs(root: Path, addresses: list[str], remote: str) -> list[str]:
    """``dvc push`` the outputs of the stages that ran; returns their addresses."""
    t0 = time.perf_counter()
    res = dvc("push", "--remote", remote, *addresses, root=root)
    if res.returncode != 0:
        raise RuntimeError(f"dvc push to remote {remote} failed (the stages ran and are committed "
                           f"here; `dvc push` again to share them):\n{res.stderr.strip()}")
    summary = [line for line in res.stdout.splitlines() if line.strip()][-1:] or [""]
    print(f"pushed {len(addresses)} stage(s) to remote {remote} in {time.perf_counter() - t0:.1f} s: "
          f"{summary[0].strip()}")
    return addresses
