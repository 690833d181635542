"""The local stack: a Prefect server, a worker, and an MLflow server, started and stopped together.

    claimbench stack up       # start all three on 127.0.0.1, create the deployments
    claimbench stack status   # what is running, and where; where the secret is (--env: exports)
    claimbench stack run      # trigger a run of a deployment (and wait for it)
    claimbench stack down     # stop everything `up` started (and what those started)

* Prefect: ``prefect server start`` (sqlite under ``.services/prefect``) on 127.0.0.1:4200,
  the deployments of :mod:`flows.deploy`, and a ``process`` worker polling the
  ``claimbench`` pool (``--gpu-worker`` adds one for ``claimbench-gpu``).
* MLflow: ``mlflow server`` on 127.0.0.1:5000 over the project's store (``mlruns.db``,
  artifacts in ``mlartifacts/``, written there directly); the worker (so every flow run and
  stage) logs to it, and what it logged stays readable without it.

**A secret.** Any user of this machine can reach 127.0.0.1, so both servers ask for a secret:
``up`` makes one per checkout (``secrets.token_urlsafe``) in ``.services/secret``, created with
mode 0600 (an existing one that group or others may read or write is refused), and kept across
``down``/``up``. The Prefect server gets ``PREFECT_SERVER_API_AUTH_STRING`` =
``claimbench:<secret>``, every Prefect client the stack starts or calls (deploy, the worker and so
every flow run, ``run``) ``PREFECT_API_AUTH_STRING``; the MLflow server runs MLflow's
``basic-auth`` app (it needs Flask-WTF: ``pip install "mlflow[auth]==3.17.2"``) with one admin user
``claimbench`` whose password is the secret, and the worker's environment (every flow run and stage)
gets ``MLFLOW_TRACKING_USERNAME``/``MLFLOW_TRACKING_PASSWORD``. A request without them gets 401
(``/health`` of both still answers); both take HTTP basic auth as user ``claimbench``.
``eval "$(claimbench stack status --env)"`` exports them in a shell; the Prefect UI asks for
``claimbench:<secret>``. Secrets travel in environments and files, never on a command line (which
other users can read in ``ps``). Without Flask-WTF ``up`` refuses to start an MLflow server unless
told ``--mlflow-no-auth`` (or ``--no-mlflow``).

Process ids, ports and addresses are kept in ``.services/stack.json``; logs in
``.services/logs/``. Each service runs in its own session so ``down`` can stop it with
everything it started, SIGTERM first, SIGKILL after a grace period.

Why a supervisor of our own (measured 2026-12-06, stop 47): ``prefect server start --background``
(Prefect 3.9.1) covers one of the three processes and returns 12.7 s before the server answers
its health check, so the health poll stays; ``mlflow server`` and ``prefect worker start`` have no
background mode; this machine has neither a systemd user bus nor a Docker daemon.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import secrets
import shlex
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from stages.common.runtime.params import repo_root

HOST = "127.0.0.1"
STATE_FILE = "stack.json"
SECRET_FILE = "secret"
USER = "claimbench"           # the MLflow admin user, and the user part of Prefect's auth string
MLFLOW_AUTH_INI = "mlflow-auth.ini"
MLFLOW_AUTH_DB = "mlflow-auth.db"
QUIET_ENV = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "true",
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "DVC_NO_ANALYTICS": "1",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
}


class StackError(RuntimeError):
    pass


# -- the secret -----------------------------------------------------------------------------
def create_or_read_secret(path: Path) -> tuple[str, bool]:
    """The stack's secret in ``path``, made (mode 0600, ``O_EXCL``) when there is none;
    returns (secret, whether it was made now)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    secret = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return read_secret(path), False
    with os.fdopen(fd, "w") as f:
        f.write(secret + "\n")
    return secret, True


def read_secret(path: Path) -> str:
    """The secret in ``path``, refused unless it is a plain file of this user that nobody else
    may read or write (mode 0600 or 0400)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise StackError(f"no secret at {path}; `claimbench stack up` makes one (a stack started "
                         f"before it had one: `claimbench stack down`, then `up`)") from None
    except OSError as err:      # ELOOP: a symlink
        raise StackError(f"{path}: cannot open the stack's secret ({err.strerror}); it must be a "
                         f"plain file, not a link: remove it and run `claimbench stack up`") from None
    with os.fdopen(fd) as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise StackError(f"{path} is not a plain file; remove it and run `claimbench stack up`")
        if st.st_uid != os.getuid():
            raise StackError(f"{path} belongs to uid {st.st_uid}, not to you (uid {os.getuid()}): "
                             f"refusing a secret someone else made; remove it and run `claimbench stack up`")
        if st.st_mode & 0o077:
            raise StackError(
                f"{path} has mode {stat.S_IMODE(st.st_mode):04o}: other users may read or change the "
                f"stack's secret, so it is refused. Remove it (`rm {path}`; `claimbench stack up` makes "
                f"a new one, mode 0600) or, if nobody else can have read it, `chmod 600 {path}`")
        secret = f.read().strip()
    if len(secret) < 16:
        raise StackError(f"{path} holds no usable secret (empty or under 16 characters); remove it "
                         f"and run `claimbench stack up`")
    return secret


def prefect_auth_string(secret: str) -> str:
    """Prefect compares the decoded ``Authorization: Basic`` credentials with this string as a
    whole; ``user:secret`` makes it plain HTTP basic auth (``curl -u claimbench:SECRET``)."""
    return f"{USER}:{secret}"


def client_auth_env(secret: str, mlflow: bool = True) -> dict[str, str]:
    """What a client of the stack (deploy, the worker, its flow runs and stages) needs."""
    env = {"PREFECT_API_AUTH_STRING": prefect_auth_string(secret)}
    if mlflow:
        env.update(MLFLOW_TRACKING_USERNAME=USER, MLFLOW_TRACKING_PASSWORD=secret)
    return env


def prefect_server_auth_env(secret: str) -> dict[str, str]:
    # the server's own client settings too, for anything in the server that calls its API
    return {"PREFECT_SERVER_API_AUTH_STRING": prefect_auth_string(secret),
            "PREFECT_API_AUTH_STRING": prefect_auth_string(secret)}


def mlflow_auth_available() -> bool:
    """MLflow's basic-auth app imports Flask-WTF (the ``mlflow[auth]`` extra)."""
    return importlib.util.find_spec("flask_wtf") is not None


def mlflow_auth_config(state_dir: Path) -> str:
    """The basic-auth app's ini: its user store under ``state_dir``; no password in it (the admin
    password comes from the environment, the first time the app starts on an empty store)."""
    db = (state_dir / MLFLOW_AUTH_DB).as_posix()
    return ("[mlflow]\n"
            "default_permission = READ\n"        # applies to users other than the admin: there are none
            f"database_uri = sqlite:///{db}\n"
            f"admin_username = {USER}\n"
            "authorization_function = mlflow.server.auth:authenticate_request_basic_auth\n"
            "grant_default_workspace_access = false\n")


def mlflow_server_auth_env(secret: str, state_dir: Path) -> dict[str, str]:
    import hashlib
    import hmac

    return {"MLFLOW_AUTH_CONFIG_PATH": str(state_dir / MLFLOW_AUTH_INI),
            "MLFLOW_AUTH_ADMIN_USERNAME": USER,
            "MLFLOW_AUTH_ADMIN_PASSWORD": secret,
            # Flask's session/CSRF key: static across the server's workers, derived from the secret
            "MLFLOW_FLASK_SERVER_SECRET_KEY": hmac.new(secret.encode(), b"mlflow-flask",
                                                       hashlib.sha256).hexdigest()}


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (replaced), readable by this user only."""
    if path.exists() or path.is_symlink():
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def _bin(name: str) -> str:
    """A console script of this environment (the venv running us), else from PATH."""
    cand = Path(sys.executable).parent / name
    return str(cand) if cand.exists() else name


def port_free(port: int, host: str = HOST) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def same_start(proc, started: float) -> bool:
    """True when ``proc`` (a psutil.Process) started when we recorded (``create_time()``), so its
    pid was not reused. Not an exact comparison: psutil adds the kernel's boot time, which the
    kernel derives from the wall clock and which moves by a second when the clock is adjusted
    (a stack test once found its own running Prefect server "exited" and left it running)."""
    return abs(proc.create_time() - started) < 2.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout: float, proc: subprocess.Popen | None = None,
              log: Path | None = None) -> None:
    """Wait until ``url`` answers 200; fail early if ``proc`` exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            tail = log.read_text()[-3000:] if log and log.exists() else ""
            raise StackError(f"{url}: the process exited with {proc.returncode} before answering\n{tail}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(0.5)
    raise StackError(f"{url} did not answer within {timeout:.0f}s")


def stop_trees(roots: list, grace: float = 20.0) -> tuple[list[int], int]:
    """SIGTERM each process in ``roots`` and all its descendants, SIGKILL what is left after
    ``grace`` seconds; returns (the pids, how many needed SIGKILL)."""
    import psutil

    procs = []
    for p in roots:
        try:
            procs.extend([p, *p.children(recursive=True)])
        except psutil.NoSuchProcess:
            continue
    for p in procs:
        try:
            p.send_signal(signal.SIGTERM)
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(procs, timeout=grace)
    for p in alive:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=10)
    return [p.pid for p in procs], len(alive)


class Stack:
    """The services of one checkout, recorded in ``<state_dir>/stack.json``."""

    def __init__(self, root: Path | None = None, state_dir: Path | None = None):
        self.root = (root or repo_root()).resolve()
        self.state_dir = Path(state_dir or self.root / ".services").resolve()
        self.logs = self.state_dir / "logs"

    # -- state -------------------------------------------------------------------
    @property
    def state_path(self) -> Path:
        return self.state_dir / STATE_FILE

    @property
    def secret_path(self) -> Path:
        return self.state_dir / SECRET_FILE

    def secret(self) -> str:
        """The secret of this checkout's stack (refused when others may read it)."""
        return read_secret(self.secret_path)

    def state(self) -> dict[str, Any]:
        if not self.state_path.exists():
            return {}
        return json.loads(self.state_path.read_text())

    def _save(self, state: dict[str, Any]) -> None:
        from stages.common.io import write_json

        write_json(self.state_path, state)

    def env(self, state: dict[str, Any] | None = None, secret: str | None = None) -> dict[str, str]:
        """The environment the services (and so the flow runs and stages) see; with ``secret``,
        a client's credentials for the servers in ``state``."""
        env = dict(os.environ)
        env.update(QUIET_ENV)
        env["PREFECT_HOME"] = str(self.state_dir / "prefect")
        for k in ("MLFLOW_RUN_ID", "DVC_ROOT", "CLAIMBENCH_PARENT_RUN_ID", "PREFECT_API_AUTH_STRING",
                  "PREFECT_SERVER_API_AUTH_STRING", "MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD",
                  "MLFLOW_TRACKING_TOKEN", "MLFLOW_AUTH_ADMIN_PASSWORD"):
            env.pop(k, None)
        state = state or {}
        if state.get("prefect_api_url"):
            env["PREFECT_API_URL"] = state["prefect_api_url"]
        if state.get("mlflow_url"):
            env["MLFLOW_TRACKING_URI"] = state["mlflow_url"]
        if secret is not None:
            env.update(client_auth_env(secret, mlflow=bool(state.get("mlflow_auth"))))
        return env

    def _spawn(self, name: str, cmd: list[str], env: dict[str, str]) -> subprocess.Popen:
        self.logs.mkdir(parents=True, exist_ok=True)
        log = open(self.logs / f"{name}.log", "ab")
        return subprocess.Popen(cmd, cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)

    # -- up / down ---------------------------------------------------------------
    def running(self) -> dict[str, int]:
        """Services recorded in the state file whose process is still alive."""
        import psutil

        out = {}
        for name, info in (self.state().get("processes") or {}).items():
            try:
                p = psutil.Process(info["pid"])
                if same_start(p, info["started"]) and p.status() != psutil.STATUS_ZOMBIE:
                    out[name] = info["pid"]
            except psutil.NoSuchProcess:
                pass
        return out

    def up(self, prefect_port: int = 4200, mlflow_port: int | None = 5000, gpu_worker: bool = False,
           deploy: bool = True, gpu_schedule: bool = False, prefect_ui: bool = True,
           timeout: float = 180, extra_env: dict[str, str] | None = None,
           mlflow_auth: bool = True) -> dict[str, Any]:
        """Start the servers and the worker(s). ``mlflow_auth=False`` starts the MLflow server
        without authentication (when Flask-WTF is missing): anyone on this machine can then
        change its runs and models."""
        import psutil

        if self.running():
            raise StackError(f"the stack is already up ({self.state_path}); `claimbench stack down` first")
        for port, what, flag in ((prefect_port, "Prefect", "--prefect-port"),
                                 (mlflow_port, "MLflow", "--mlflow-port")):
            if port and not port_free(port):
                raise StackError(f"port {port} on {HOST} is taken (another {what} server?); "
                                 f"pick another with {flag}")
        if mlflow_port and mlflow_auth and not mlflow_auth_available():
            raise StackError(
                "MLflow's basic-auth app needs Flask-WTF, which is not installed: "
                "`pip install \"mlflow[auth]==3.17.2\"`. Or start the stack without the MLflow server "
                "(--no-mlflow: stages log to mlruns.db directly), or with an unauthenticated one that "
                "any user of this machine can read and rewrite (--mlflow-no-auth)")
        self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        secret, made = create_or_read_secret(self.secret_path)
        print(f"{'made' if made else 'using'} the stack's secret {self.secret_path} (mode 0600)", flush=True)
        with_auth = bool(mlflow_port) and mlflow_auth
        state: dict[str, Any] = {"root": str(self.root), "processes": {},
                                 "secret_file": str(self.secret_path), "user": USER,
                                 "mlflow_auth": with_auth}
        base_env = self.env()
        base_env.update(extra_env or {})

        def record(name: str, proc: subprocess.Popen) -> None:
            state["processes"][name] = {"pid": proc.pid,
                                        "started": psutil.Process(proc.pid).create_time()}
            self._save(state)     # saved as we go: `down` can stop a half-started stack

        try:
            print(f"starting Prefect server on {HOST}:{prefect_port} ...", flush=True)
            server = self._spawn("prefect-server", [
                _bin("prefect"), "server", "start", "--host", HOST, "--port", str(prefect_port),
                "--analytics-off", "--ui" if prefect_ui else "--no-ui"],
                {**base_env, **prefect_server_auth_env(secret)})
            record("prefect-server", server)
            api = f"http://{HOST}:{prefect_port}/api"
            wait_http(f"{api}/health", timeout, server, self.logs / "prefect-server.log")
            state["prefect_api_url"] = api
            self._save(state)

            if mlflow_port:
                store = f"sqlite:///{(self.root / 'mlruns.db').as_posix()}"
                # MLflow 3.17's job runner (GenAI jobs this project never submits): off, as in `claimbench ui`
                ml_env, auth_args = {**base_env, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}, []
                if with_auth:
                    # a fresh user store each time: the admin's password is set only when the
                    # store is empty, so this keeps it equal to the secret (even a new one)
                    for f in (MLFLOW_AUTH_DB, MLFLOW_AUTH_DB + "-journal"):
                        (self.state_dir / f).unlink(missing_ok=True)
                    write_private(self.state_dir / MLFLOW_AUTH_INI, mlflow_auth_config(self.state_dir))
                    ml_env.update(mlflow_server_auth_env(secret, self.state_dir))
                    auth_args = ["--app-name", "basic-auth"]
                else:
                    print(f"WARNING: the MLflow server on {HOST}:{mlflow_port} has no authentication: "
                          "any user of this machine can read, change and delete its runs and "
                          "registered models", file=sys.stderr, flush=True)
                print(f"starting MLflow server on {HOST}:{mlflow_port}"
                      f"{' (basic auth)' if with_auth else ''} ...", flush=True)
                ml = self._spawn("mlflow-server", [
                    _bin("mlflow"), "server", "--host", HOST, "--port", str(mlflow_port),
                    "--workers", "1", "--backend-store-uri", store,
                    # the same artifact folder the sqlite store uses, written directly (this
                    # server is on loopback, so its clients share this disk): experiments and
                    # runs made through it stay usable by `dvc repro` without the server
                    "--default-artifact-root", (self.root / "mlartifacts").as_uri(),
                    "--no-serve-artifacts", *auth_args], ml_env)
                record("mlflow-server", ml)
                url = f"http://{HOST}:{mlflow_port}"
                wait_http(f"{url}/health", timeout, ml, self.logs / "mlflow-server.log")
                state["mlflow_url"] = url
                self._save(state)

            env = self.env(state, secret)
            env.update(extra_env or {})
            if deploy:
                print("creating work pools and deployments ...", flush=True)
                cmd = [sys.executable, "-m", "flows.deploy"] + (["--gpu-schedule"] if gpu_schedule else [])
                res = subprocess.run(cmd, cwd=self.root, env=env, capture_output=True, text=True,
                                     timeout=timeout)
                if res.returncode != 0:
                    raise StackError(f"deploying failed:\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}")
                state["deployments"] = [line.split()[-1] for line in res.stdout.splitlines()
                                        if line.startswith("deployed ")]
            from .deploy import CPU_POOL, GPU_POOL

            for pool in [CPU_POOL] + ([GPU_POOL] if gpu_worker else []):
                name = f"worker-{pool}"
                w = self._spawn(name, [_bin("prefect"), "worker", "start", "--pool", pool,
                                       "--type", "process", "--name", f"{pool}@{socket.gethostname()}"],
                                env)
                record(name, w)
            time.sleep(1.0)
            dead = [n for n, info in state["processes"].items() if n not in self.running()]
            if dead:
                raise StackError(f"{dead} exited right after starting; see {self.logs}")
        except BaseException:
            self.down(quiet=True)
            raise
        return state

    def down(self, grace: float = 20.0, quiet: bool = False) -> list[int]:
        """Stop every recorded service and all its descendants; returns the pids stopped."""
        import psutil

        roots = []
        for info in (self.state().get("processes") or {}).values():
            try:
                p = psutil.Process(info["pid"])
            except psutil.NoSuchProcess:
                continue
            if same_start(p, info["started"]):      # else the pid was reused: not ours
                roots.append(p)
        stopped, killed = stop_trees(roots, grace)
        if self.state_path.exists():
            self.state_path.unlink()
        if not quiet:
            print(f"stopped {len(stopped)} process(es)" + (f" ({killed} needed SIGKILL)" if killed else ""))
        return stopped

    # -- using it ----------------------------------------------------------------
    def trigger(self, deployment: str = "nightly", parameters: dict[str, Any] | None = None,
                wait: bool = True, timeout: float = 3600) -> dict[str, Any]:
        """Start a run of ``deployment`` now; with ``wait``, block until it ends."""
        state = self.state()
        if not state.get("prefect_api_url") or "prefect-server" not in self.running():
            raise StackError("the stack is not up; run `claimbench stack up` first")
        from prefect.deployments import run_deployment
        from prefect.settings import PREFECT_API_AUTH_STRING, PREFECT_API_URL, temporary_settings

        from .deploy import FLOW_NAME

        name = deployment if "/" in deployment else f"{FLOW_NAME}/{deployment}"
        with temporary_settings(updates={PREFECT_API_URL: state["prefect_api_url"],
                                         PREFECT_API_AUTH_STRING: prefect_auth_string(self.secret())}):
            run = run_deployment(name, parameters=parameters or {}, timeout=timeout if wait else 0)
        return {"flow_run_id": str(run.id), "name": run.name, "state": run.state.type.value,
                "message": run.state.message}


def _print_up(state: dict[str, Any], stack: Stack) -> None:
    print("\nthe stack is up:")
    print(f"  Prefect API   {state.get('prefect_api_url')}   (UI: {state['prefect_api_url'][:-4]})")
    if state.get("mlflow_url"):
        print(f"  MLflow UI     {state['mlflow_url']}"
              + ("" if state.get("mlflow_auth") else "   (NO AUTHENTICATION)"))
    for d in state.get("deployments", []):
        print(f"  deployment    {d}")
    print(f"  logs          {stack.logs}")
    _print_secret_help(state, stack)
    print("\ntrigger a run:  claimbench stack run [--profile smoke]")
    print("stop it all:    claimbench stack down")


def _print_secret_help(state: dict[str, Any], stack: Stack) -> None:
    print(f"  secret        {stack.secret_path} (mode 0600): the servers refuse requests without it;")
    print(f"                user {USER}, password = the file's content (the Prefect UI asks for "
          f"{USER}:<secret>);")
    print("                in a shell: eval \"$(claimbench stack status --env)\"")


def export_lines(state: dict[str, Any], secret: str) -> list[str]:
    """``export`` lines that make a shell a client of the stack in ``state``."""
    env = {}
    if state.get("prefect_api_url"):
        env["PREFECT_API_URL"] = state["prefect_api_url"]
    env.update(client_auth_env(secret, mlflow=False))
    if state.get("mlflow_url"):
        env["MLFLOW_TRACKING_URI"] = state["mlflow_url"]
        if state.get("mlflow_auth"):
            env.update(MLFLOW_TRACKING_USERNAME=USER, MLFLOW_TRACKING_PASSWORD=secret)
    return [f"export {k}={shlex.quote(v)}" for k, v in env.items()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="claimbench stack", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--state-dir", type=Path, default=None, help="default: .services/")
    sub = ap.add_subparsers(dest="action", required=True)
    up = sub.add_parser("up", help="start the Prefect server, a worker and the MLflow server")
    up.add_argument("--prefect-port", type=int, default=4200)
    up.add_argument("--mlflow-port", type=int, default=5000)
    up.add_argument("--no-mlflow", action="store_true", help="stages log to the sqlite store")
    up.add_argument("--gpu-worker", action="store_true", help="also a worker for the GPU pool")
    up.add_argument("--gpu-schedule", action="store_true", help="turn on the GPU deployment's schedule")
    up.add_argument("--no-prefect-ui", action="store_true", help="the Prefect API without its web UI")
    up.add_argument("--mlflow-no-auth", action="store_true",
                    help="start the MLflow server without authentication (when Flask-WTF is missing): "
                         "any user of this machine can then read and rewrite its runs and models")
    sub.add_parser("down", help="stop everything `up` started")
    status = sub.add_parser("status", help="what is running, and where the secret is")
    status.add_argument("--env", action="store_true",
                        help="print only `export` lines with the URLs and the secret, for "
                             "eval \"$(claimbench stack status --env)\" (they contain the secret)")
    run = sub.add_parser("run", help="trigger a deployment run now")
    run.add_argument("deployment", nargs="?", default="nightly")
    run.add_argument("--profile", choices=["smoke", "default", "paper"])
    run.add_argument("--target", action="append", dest="targets", help="a dvc.yaml stage (repeatable)")
    run.add_argument("--force", action="store_true", help="run the targets even when up to date")
    run.add_argument("--no-wait", action="store_true")
    a = ap.parse_args(argv)
    stack = Stack(state_dir=a.state_dir)
    try:
        if a.action == "up":
            state = stack.up(a.prefect_port, None if a.no_mlflow else a.mlflow_port,
                             gpu_worker=a.gpu_worker, gpu_schedule=a.gpu_schedule,
                             prefect_ui=not a.no_prefect_ui, mlflow_auth=not a.mlflow_no_auth)
            _print_up(state, stack)
        elif a.action == "down":
            stack.down()
        elif a.action == "status":
            state, alive = stack.state(), stack.running()
            if a.env:
                if not state:
                    print("error: the stack is down; `claimbench stack up` first", file=sys.stderr)
                    return 1
                print("\n".join(export_lines(state, stack.secret())))
                return 0
            if not state:
                print("the stack is down")
                if stack.secret_path.exists():
                    print(f"  its secret (kept for the next `up`): {stack.secret_path}")
                return 1
            for name, info in state["processes"].items():
                print(f"  {name:24s} pid {info['pid']:<8d} {'running' if name in alive else 'NOT RUNNING'}")
            print(f"  Prefect API {state.get('prefect_api_url')}   MLflow {state.get('mlflow_url')}"
                  + ("" if not state.get("mlflow_url") or state.get("mlflow_auth") else " (NO AUTHENTICATION)"))
            _print_secret_help(state, stack)
            return 0 if len(alive) == len(state["processes"]) else 1
        elif a.action == "run":
            params: dict[str, Any] = {}
            if a.profile:
                params["profile"] = a.profile
            if a.targets:
                params["targets"] = a.targets
            if a.force:
                params["force"] = True
            res = stack.trigger(a.deployment, params, wait=not a.no_wait)
            print(json.dumps(res, indent=2))
            return 0 if res["state"] in ("COMPLETED", "SCHEDULED", "PENDING", "RUNNING") else 1
    except StackError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
