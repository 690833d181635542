"""The tracking agent: one process that logs the stages' MLflow runs for them.

A stage's fixed cost used to be dominated by MLflow itself: importing it (pandas, SQLAlchemy,
alembic, its GenAI modules) and opening the sqlite store took each stage process 2.5-3.6 s,
six minutes of every 150-stage run. The agent pays that once. The first tracked stage of a
pipeline run starts it (``python -m stages.common.runtime.tracking_agent``, detached, in the
repository); every stage then talks to it over a Unix socket and its own process never imports
MLflow. The agent logs exactly what a stage would have logged itself (it runs the same
:class:`~stages.common.runtime.tracking.StageRun`), and exits after ``idle`` seconds without a stage.

One agent serves one repository, one tracking store and one version of the tracking code:
its socket's name is a hash of the repository path, ``$MLFLOW_TRACKING_URI``,
``$CLAIMBENCH_ARTIFACT_ROOT``, the Python executable and the source of this module, of
:mod:`~stages.common.runtime.tracking` and of :mod:`~stages.common.runtime.registry`, so an edit to any of them
starts a new agent (the old one idles out).

Protocol: one JSON object a line each way. A connection is one stage run: ``open`` creates the
run; ``call`` runs one of :data:`CALLS` on it; ``finish`` logs the stage's metrics files and
outs and ends it FINISHED; ``fail`` ends it FAILED with the stage's error. A connection that
closes before ``finish`` or ``fail`` (the stage was killed, even with SIGKILL) ends its run
FAILED at once, saying so. Calls into the store are serialised (one lock): SQLite takes one
writer at a time anyway.

``CLAIMBENCH_TRACKING=inprocess`` makes a stage log from its own process instead (no agent);
``off`` logs nothing.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import signal
import socket
import socketserver
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

IDLE_S = 60.0            # an agent with no stage for this long exits
START_TIMEOUT_S = 120.0  # how long a stage waits for a new agent to answer
CALLS = ("log_metrics", "log_curve", "log_dict", "log_artifact", "log_model", "set_tags", "alias_models")


class AgentError(RuntimeError):
    """The agent could not do what a stage asked (the MLflow error, as the agent saw it)."""


RESTART = "the store was replaced under this agent; it exits, start a new one"


def _jsonable(obj: Any) -> Any:
    """numpy scalars and arrays, paths: what stages hand the logging calls."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    raise TypeError(f"cannot send a {type(obj).__name__} to the tracking agent")


def _encode(msg: dict) -> bytes:
    return json.dumps(msg, default=_jsonable).encode() + b"\n"


def address(root: Path) -> Path:
    """The socket of the agent for this repository, store and tracking code."""
    from stages.common.runtime import tracking

    here = Path(__file__)
    key = hashlib.sha256()
    for part in (str(root.resolve()), tracking.tracking_uri(root), os.environ.get("CLAIMBENCH_ARTIFACT_ROOT", ""),
                 sys.executable, here.read_text(), here.with_name("tracking.py").read_text(),
                 here.with_name("registry.py").read_text()):
        key.update(part.encode() + b"\0")
    return socket_folder() / f"agent-{key.hexdigest()[:16]}.sock"   # short: a socket path has a 107-byte limit


class UnsafeSocketFolder(RuntimeError):
    """The agents' socket folder could be another user's: stages refuse to talk through it."""


def socket_folder() -> Path:
    """``<tempdir>/claimbench-<uid>``, made with mode 0700, and refused unless it is a real folder
    (not a link) that this user owns and no one else may enter: on a machine with several users,
    anyone can create that predictable name first and serve a fake agent (or plant a link) in it."""
    folder = Path(tempfile.gettempdir()) / f"claimbench-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    st = os.lstat(folder)
    problem = None
    if not stat.S_ISDIR(st.st_mode):
        problem = "is not a folder (a link or a file)"
    elif st.st_uid != os.getuid():
        problem = f"belongs to user id {st.st_uid}, not to you ({os.getuid()})"
    elif st.st_mode & 0o077:
        problem = f"has mode {stat.S_IMODE(st.st_mode):o}: others may enter it"
    if problem:
        raise UnsafeSocketFolder(
            f"the tracking agent's socket folder {folder} {problem}; a stage will not talk to an agent "
            f"another user could have started. Remove it if it is yours and stale (rm -r {folder}), or "
            f"point TMPDIR at a folder of your own, then run again.")
    return folder


# -- the stage's side ---------------------------------------------------------------------

class Connection:
    """A line-based JSON connection to the agent. Each request waits for its reply; a SIGTERM
    that lands meanwhile waits until the reply is in (:func:`tracking.sigterm_deferred`), so
    request and reply never come apart."""

    def __init__(self, path: Path, timeout: float = 3600.0):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self.reader = self.sock.makefile("rb")

    def request(self, op: str, **args: Any) -> Any:
        from stages.common.runtime.tracking import sigterm_deferred

        with sigterm_deferred():
            line = self._exchange(_encode({"op": op, "args": args}))
        if not line:
            raise AgentError(f"the tracking agent closed the connection during {op!r} (see its log, "
                             f"{address_log(self.path)})")
        reply = json.loads(line)
        if not reply["ok"]:
            raise AgentError(f"tracking agent, {op}: {reply['error']}")
        return reply["result"]

    def _exchange(self, payload: bytes) -> bytes:
        self.sock.sendall(payload)
        return self.reader.readline()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.reader.close()
            self.sock.close()


def address_log(path: Path) -> Path:
    return path.with_suffix(".log")


def connect(root: Path) -> Connection:
    """A connection to this repository's agent, starting one if none answers."""
    from filelock import FileLock

    path = address(root)
    with contextlib.suppress(OSError):
        return Connection(path)
    with FileLock(str(path) + ".lock", timeout=START_TIMEOUT_S):
        with contextlib.suppress(OSError):
            return Connection(path)        # another stage started it while we waited
        path.unlink(missing_ok=True)       # a dead agent's socket
        env = {k: v for k, v in os.environ.items() if k not in ("CLAIMBENCH_PARENT_RUN_ID", "MLFLOW_RUN_ID")}
        code = str(Path(__file__).resolve().parents[2])      # the agent runs this process's code
        env["PYTHONPATH"] = os.pathsep.join([code, *filter(None, [env.get("PYTHONPATH")])])
        env.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
        env.setdefault("DO_NOT_TRACK", "true")
        # --detach: the agent forks away and its first process exits, so the agent is nobody's
        # child: not in the stage's process tree, which a stopping flow kills
        # O_NOFOLLOW: never append to whatever a link in the folder points at
        fd = os.open(address_log(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        with open(fd, "ab") as log:
            proc = subprocess.run(
                [sys.executable, "-m", "stages.common.runtime.tracking_agent", "--socket", str(path), "--root",
                 str(root), "--idle", os.environ.get("CLAIMBENCH_AGENT_IDLE_S", str(IDLE_S)), "--detach"],
                cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                start_new_session=True, timeout=START_TIMEOUT_S)
        if proc.returncode != 0 or not proc.stdout.strip().isdigit():
            raise AgentError(f"the tracking agent did not start (status {proc.returncode}):\n{_log_tail(path)}")
        pid = int(proc.stdout)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                raise AgentError(f"the tracking agent exited at start:\n{_log_tail(path)}") from None
            with contextlib.suppress(OSError):
                return Connection(path)
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)
        raise AgentError(f"the tracking agent did not answer within {START_TIMEOUT_S:.0f} s "
                         f"(log: {address_log(path)})")


def _log_tail(path: Path) -> str:
    return address_log(path).read_text(errors="replace")[-2000:] if address_log(path).exists() else ""


class RemoteRun:
    """What a stage logs to when the agent keeps its run: the calls of
    :class:`~stages.common.runtime.tracking.StageRun` that stages make, sent over the connection."""

    def __init__(self, root: Path, **open_args: Any):
        for attempt in range(2):
            self.conn = connect(root)
            try:
                self.run_id = self.conn.request("open", **open_args)
                return
            except AgentError as err:
                self.conn.close()
                if RESTART not in str(err) or attempt:
                    raise
                time.sleep(0.5)                  # the old agent is on its way out
            except BaseException as exc:         # e.g. a SIGTERM held back until the run was open:
                with contextlib.suppress(Exception):      # the agent has the run, so fail it
                    self.fail(exc)
                self.conn.close()
                raise

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return self.conn.request("call", method=method, args=list(args), kwargs=kwargs)

    def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
        self._call("log_metrics", metrics, step)

    def log_curve(self, key: str, values, steps=None) -> None:
        self._call("log_curve", key, [float(v) for v in values],
                   None if steps is None else [int(s) for s in steps])

    def log_dict(self, obj: Any, artifact_file: str) -> None:
        self._call("log_dict", obj, artifact_file)

    def log_artifact(self, path, artifact_path: str | None = None) -> None:
        self._call("log_artifact", str(Path(path).resolve()), artifact_path)

    def log_model(self, model_dir, name: str, params: dict[str, Any] | None = None) -> str:
        return self._call("log_model", str(Path(model_dir).resolve()), name, params)

    def set_tags(self, tags: dict[str, Any]) -> None:
        self._call("set_tags", {k: str(v) for k, v in tags.items()})

    def alias_models(self, alias: str) -> list[str]:
        lines = self._call("alias_models", alias)
        for line in lines:
            print(f"  model {line}", flush=True)
        return lines

    def finish_stage(self, metrics: list[str], outs: list[str], timings: dict[str, float]) -> None:
        """Log the stage's metrics files and outs and end the run FINISHED. The connection stays
        open until :meth:`close`: a SIGTERM that lands meanwhile still fails the run."""
        self.conn.request("finish", metrics=metrics, outs=outs, timings=timings)

    def fail(self, exc: BaseException) -> None:
        from stages.common.runtime.tracking import error_line

        try:
            self.conn.request("fail", message=error_line(exc),
                              details="".join(traceback.format_exception(exc)))
        finally:
            self.conn.close()

    def close(self) -> None:
        self.conn.close()


# -- the agent's side ---------------------------------------------------------------------

class _Handler(socketserver.StreamRequestHandler):
    def _requests(self):
        """The stage's requests, a line each, until it closes the connection or dies. A stage killed
        with a reply unread resets the connection (ECONNRESET): that ends them too, so its run is
        still failed below (the reset escaped and left it RUNNING; found by
        benchmarks/pipeline/fault_campaign.py)."""
        while True:
            try:
                line = self.rfile.readline()
            except OSError:
                return
            if not line:
                return
            yield line

    def handle(self) -> None:
        srv: Agent = self.server  # type: ignore[assignment]
        run = None
        closed = False
        with srv.busy():
            for line in self._requests():
                msg = json.loads(line)
                op, args = msg["op"], msg.get("args", {})
                try:
                    with srv.lock:
                        if op == "open" and run is None:
                            if srv.store_identity() != srv.store_id:   # e.g. mlruns.db deleted
                                srv.reason = "its store was replaced"
                                threading.Thread(target=srv.shutdown, daemon=True).start()
                                raise AgentError(RESTART)
                            run = srv.open_run(args)
                            result = run.run_id
                        elif run is None or (closed and op != "fail"):
                            raise AgentError(f"{op!r} without an open run")
                        elif op == "call" and args["method"] in CALLS:
                            result = getattr(run, args["method"])(*args["args"], **args["kwargs"])
                        elif op == "finish":
                            run.finish_stage(args["metrics"], args["outs"], args["timings"])
                            closed, result = True, None
                        elif op == "fail":
                            from stages.common.runtime.tracking import record_failure

                            record_failure(run.client, run.run_id, args["message"], args.get("details"))
                            closed, result = True, None
                        else:
                            raise AgentError(f"unknown request {op!r}")
                    reply = {"ok": True, "result": result}
                except Exception as exc:  # noqa: BLE001 - the stage gets the error
                    from stages.common.runtime.tracking import error_line

                    reply = {"ok": False, "error": error_line(exc)}
                    traceback.print_exc()
                try:
                    self.wfile.write(_encode(reply))
                    self.wfile.flush()
                except OSError:
                    break
            if run is not None and not closed:       # the stage went away mid-run
                srv.orphaned(run)


class Agent(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: Path, root: Path, idle: float):
        self.root, self.idle = root, idle
        self.lock = threading.Lock()
        self._count = threading.Lock()
        self.active, self.last = 0, time.monotonic()
        self.reason = "stopped"
        self.store_id = self.store_identity()
        super().__init__(str(path), _Handler)

    def store_identity(self):
        """The sqlite store's file (device, inode), so a store deleted and made anew is noticed:
        MLflow keeps its engine on the old file."""
        from stages.common.runtime.tracking import tracking_uri

        uri = tracking_uri(self.root)
        if not uri.startswith("sqlite:///"):
            return uri
        try:
            st = Path(uri[len("sqlite:///"):]).stat()
        except FileNotFoundError:
            return None
        return st.st_dev, st.st_ino

    @contextlib.contextmanager
    def busy(self):
        with self._count:
            self.active += 1
        try:
            yield
        finally:
            with self._count:
                self.active -= 1
                self.last = time.monotonic()

    def open_run(self, a: dict):
        from stages.common.runtime.tracking import StageRun

        return StageRun(a["study"], a["step"], a["stage_name"], a["profile"], a["params"], root=self.root,
                        deps=a["deps"], outs=a["outs"], dep_hashes=a["dep_hashes"],
                        process={"host": a["host"], "pid": a["pid"]}, parent=a.get("parent"),
                        threads=a.get("threads"))

    def orphaned(self, run) -> None:
        from stages.common.runtime.tracking import HOST_TAG, PID_TAG, record_failure

        with self.lock:
            record_failure(run.client, run.run_id,
                           f"the stage {run.stage_name} process (pid {run.tags[PID_TAG]} on "
                           f"{run.tags[HOST_TAG]}) ended without closing its run: killed "
                           "(SIGKILL, out of memory) or crashed")

    def watch_idle(self) -> None:
        while True:
            time.sleep(min(1.0, self.idle / 4))
            with self._count:
                quiet = self.active == 0 and time.monotonic() - self.last > self.idle
            if quiet:
                self.reason = f"idle for {self.idle:.0f} s"
                self.shutdown()
                return


def serve(path: Path, root: Path, idle: float) -> None:
    from stages.common.runtime.tracking import client

    client(root)                     # import MLflow, create or migrate the store: once
    path.unlink(missing_ok=True)
    agent = Agent(path, root, idle)
    inode = path.stat().st_ino
    print(f"tracking agent pid {os.getpid()} for {root} on {path}", flush=True)
    threading.Thread(target=agent.watch_idle, daemon=True).start()

    def stop(signum, frame):  # noqa: ARG001 - signal handler signature
        agent.reason = signal.Signals(signum).name
        raise SystemExit(f"tracking agent: {agent.reason}")

    signal.signal(signal.SIGTERM, stop)
    try:
        agent.serve_forever(poll_interval=0.2)
    finally:
        agent.server_close()
        with contextlib.suppress(OSError):
            if path.stat().st_ino == inode:
                path.unlink()
        print(f"tracking agent pid {os.getpid()}: {agent.reason}, exiting", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--socket", required=True, type=Path)
    ap.add_argument("--root", required=True, type=Path)
    ap.add_argument("--idle", type=float, default=IDLE_S)
    ap.add_argument("--detach", action="store_true", help="fork away; print the agent's pid and return")
    a = ap.parse_args(argv)
    if a.detach:
        pid = os.fork()
        if pid:
            print(pid, flush=True)
            os._exit(0)
        os.setsid()
        log = os.open(address_log(a.socket), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
    serve(a.socket, a.root.resolve(), a.idle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
