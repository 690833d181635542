"""Running generated Pyomo scripts outside the pipeline's process.

What it is: isolation of the pipeline from a generated script's hangs, crashes and memory use.
What it is not: a security boundary. A hostile script can still read and write files, open
sockets and start processes as this user; the scripts here come from our own translators (M2),
which can be wrong but not malicious.

How: :func:`run_batch` starts ``workers`` worker processes (:mod:`sandbox_worker`; one Python
start and Pyomo import, about 1 s, serves many scripts), each

* with an address-space limit (``resource.setrlimit(RLIMIT_AS, memory_mb)`` before exec; a
  script that goes over gets a MemoryError, recorded as ``memory``), no core files, no file
  over ``FILE_LIMIT`` (a script printing in a loop is stopped, recorded as ``crash``);
* in a fresh temporary folder as its working directory, with a minimal environment
  (``python -I``: no PYTHON* variables, no user site; PATH, HOME/TMPDIR in that folder, one
  thread);
* under a per-script wall-clock limit: SIGALRM inside the worker, and a watchdog here that
  kills the worker's process group ``grace_s`` after the limit when the alarm cannot fire
  (time spent in C code). A killed or dead worker is replaced and the batch goes on: that
  script is recorded as ``timeout`` or ``crash``.

Stages of a :class:`SandboxResult`: ``ok``; ``syntax`` (does not compile); ``exec`` (raises when
run or when build_model() runs); ``no_build_model``; ``not_a_model`` (build_model() returns no
Pyomo block); ``timeout``; ``memory``; ``crash`` (the worker died); ``task_error`` (the model
built but the task failed on it: e.g. the reference would not build, or a "call" target raised).

Tasks: ``{"kind": "compare", "reference": script, "points": k, "seed": s}`` builds both models,
samples k points in the reference's box and returns both models' variables, objectives and
constraint residuals there (see :func:`sandbox_worker.evaluate`; :mod:`equivalence` judges
them); ``{"kind": "call", "target": "stages.autoopt.<module>:<function>", "kwargs": {...}}``
returns ``target(model, **kwargs)`` (a JSON-able dict).
"""
from __future__ import annotations

import json
import os
import queue
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

STAGES = ("ok", "syntax", "exec", "no_build_model", "not_a_model", "timeout", "memory", "crash",
          "task_error")
WORKER = Path(__file__).with_name("sandbox_worker.py")
ROOT = Path(__file__).resolve().parents[3]   # stages/autoopt/m2/sandbox.py -> the repository root
START_TIMEOUT_S = 120.0
FILE_LIMIT = 256 * 1024 * 1024      # bytes a worker may write to one file (its stderr file included)
_SPAWN = threading.Lock()


@dataclass
class SandboxResult:
    ok: bool
    stage: str
    error: str
    payload: dict | None
    seconds: float


class SandboxError(RuntimeError):
    """The sandbox itself cannot run (a worker does not start); not a script's failure."""


def _limits(memory_mb: int):
    """The child's limits, set between fork and exec (``resource`` is imported up front: the
    child of a threaded parent must not import)."""
    def apply() -> None:
        limit = int(memory_mb) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    return apply


class Worker:
    """One worker process and the line protocol with it."""

    def __init__(self, memory_mb: int, grace_s: float):
        self.memory_mb, self.grace_s = memory_mb, grace_s
        self.proc: subprocess.Popen | None = None
        self.dir: str | None = None
        self._buf = b""

    def start(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="autoopt-sandbox-")
        env = {"PATH": os.defpath, "HOME": self.dir, "TMPDIR": self.dir, "LANG": "C.UTF-8",
               "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        self._err = open(os.path.join(self.dir, "stderr.txt"), "wb")
        with _SPAWN:                      # one fork at a time when several workers start together
            self.proc = subprocess.Popen(
                [sys.executable, "-I", str(WORKER), str(ROOT)], cwd=self.dir, env=env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
                preexec_fn=_limits(self.memory_mb), start_new_session=True)
        self._buf = b""
        line = self._readline(START_TIMEOUT_S)
        if line is None or not json.loads(line).get("ready"):
            tail = self.stderr_tail()
            self.stop()
            raise SandboxError(f"a sandbox worker did not start (memory_mb={self.memory_mb}): {tail}")

    def stderr_tail(self, n: int = 400) -> str:
        try:
            self._err.flush()
            with open(os.path.join(self.dir, "stderr.txt"), "rb") as fh:
                data = fh.read()
            return data[-n:].decode("utf-8", "replace").strip()
        except (OSError, TypeError):
            return ""

    def _readline(self, timeout: float) -> str | None:
        """One line from the worker, or None when it closes the pipe (``self.eof``) or the time
        runs out."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        self.eof = False
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                self.eof = True
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode("utf-8")

    def run(self, script: str, task: dict, time_limit_s: float) -> tuple[str, str, dict | None]:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        req = json.dumps({"script": script, "task": task, "time_limit_s": time_limit_s}) + "\n"
        try:
            self.proc.stdin.write(req.encode("utf-8"))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.stop()
            return "crash", "the worker was gone before the script started", None
        line = self._readline(time_limit_s + self.grace_s)
        if line is None:
            if not self.eof:                      # alive but silent: the watchdog's kill
                self.stop()
                return "timeout", f"over {time_limit_s} s (killed by the watchdog)", None
            try:
                code = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:     # pragma: no cover - closed its pipe, still running
                code = None
            tail = self.stderr_tail()
            self.stop()
            return "crash", f"the worker died (exit {code}){': ' + tail if tail else ''}"[:500], None
        ans = json.loads(line)
        if ans["stage"] in ("memory", "timeout"):
            self.stop()                           # start clean after a script that ran out
        return ans["stage"], ans.get("error", ""), ans.get("payload")

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass
            for f in (self.proc.stdin, self.proc.stdout):
                try:
                    f.close()
                except OSError:
                    pass
            self.proc = None
        if getattr(self, "_err", None) is not None:
            self._err.close()
            self._err = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


def run_batch(scripts: list[str], task: dict | list[dict], *, time_limit_s: float, memory_mb: int,
              workers: int = 1, desc: str | None = None, grace_s: float | None = None) -> list[SandboxResult]:
    """Run each script (with ``task``, or ``task[k]`` for script k) in the sandbox; one result a
    script, in order. Raises :class:`SandboxError` only when a worker cannot start at all."""
    tasks = task if isinstance(task, list) else [task] * len(scripts)
    if len(tasks) != len(scripts):
        raise ValueError(f"{len(tasks)} tasks for {len(scripts)} scripts")
    if time_limit_s <= 0:
        raise ValueError(f"time_limit_s must be > 0, got {time_limit_s}")
    if memory_mb < 64:
        raise ValueError(f"memory_mb must be >= 64, got {memory_mb}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    for t in tasks:
        if not isinstance(t, dict) or t.get("kind") not in ("compare", "call"):
            raise ValueError(f"a task is a dict with kind 'compare' or 'call', got {t!r:.80}")
    grace = grace_s if grace_s is not None else max(2.0, 0.5 * time_limit_s)
    results: list[SandboxResult | None] = [None] * len(scripts)
    if not scripts:
        return []
    from tqdm import tqdm

    todo: queue.Queue[int] = queue.Queue()
    for k in range(len(scripts)):
        todo.put(k)
    bar = tqdm(total=len(scripts), desc=desc or "sandbox", mininterval=5, disable=desc is None)
    lock = threading.Lock()
    errors: list[BaseException] = []

    def loop() -> None:
        w = Worker(memory_mb, grace)
        try:
            while not errors:
                try:
                    k = todo.get_nowait()
                except queue.Empty:
                    return
                t0 = time.perf_counter()
                script = scripts[k]
                if not isinstance(script, str):
                    stage, err, payload = "syntax", f"not a str: {type(script).__name__}", None
                else:
                    stage, err, payload = w.run(script, tasks[k], time_limit_s)
                results[k] = SandboxResult(stage == "ok", stage, err, payload, time.perf_counter() - t0)
                with lock:
                    bar.update(1)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)
        finally:
            w.stop()

    n = min(workers, len(scripts))
    if n == 1:
        loop()
    else:
        threads = [threading.Thread(target=loop, daemon=True) for _ in range(n)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    bar.close()
    if errors:
        raise errors[0]
    return results  # type: ignore[return-value]
