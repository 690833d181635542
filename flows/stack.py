"""The local stack: a Prefect server, a worker, and an MLflow server, started and stopped together.

    claimbench stack up       # start all three on 127.0.0.1, create the deployments
    claimbench stack status   # what is running, and where
    claimbench stack run      # trigger a run of a deployment (and wait for it)
    claimbench stack down     # stop everything `up` started (and what those started)

* Prefect: ``prefect server start`` (sqlite under ``.services/prefect``) on 127.0.0.1:4200,
  the deployments of :mod:`flows.deploy`, and a ``process`` worker polling the
  ``claimbench`` pool (``--gpu-worker`` adds one for ``claimbench-gpu``).
* MLflow: ``mlflow server`` on 127.0.0.1:5000 over the project's store (``mlruns.db``,
  artifacts in ``mlartifacts/``, written there directly); the worker (so every flow run and
  stage) logs to it, and what it logged stays readable without it.

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
import json
import os
import signal
import socket
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

    def state(self) -> dict[str, Any]:
        if not self.state_path.exists():
            return {}
        return json.loads(self.state_path.read_text())

    def _save(self, state: dict[str, Any]) -> None:
        from stages.common.io import write_json

        write_json(self.state_path, state)

    def env(self, state: dict[str, Any] | None = None) -> dict[str, str]:
        """The environment the services (and so the flow runs and stages) see."""
        env = dict(os.environ)
        env.update(QUIET_ENV)
        env["PREFECT_HOME"] = str(self.state_dir / "prefect")
        for k in ("MLFLOW_RUN_ID", "DVC_ROOT", "CLAIMBENCH_PARENT_RUN_ID"):
            env.pop(k, None)
        state = state or {}
        if state.get("prefect_api_url"):
            env["PREFECT_API_URL"] = state["prefect_api_url"]
        if state.get("mlflow_url"):
            env["MLFLOW_TRACKING_URI"] = state["mlflow_url"]
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
           timeout: float = 180, extra_env: dict[str, str] | None = None) -> dict[str, Any]:
        import psutil

        if self.running():
            raise StackError(f"the stack is already up ({self.state_path}); `claimbench stack down` first")
        for port, what, flag in ((prefect_port, "Prefect", "--prefect-port"),
                                 (mlflow_port, "MLflow", "--mlflow-port")):
            if port and not port_free(port):
                raise StackError(f"port {port} on {HOST} is taken (another {what} server?); "
                                 f"pick another with {flag}")
        state: dict[str, Any] = {"root": str(self.root), "processes": {}}
        self.state_dir.mkdir(parents=True, exist_ok=True)
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
                "--analytics-off", "--ui" if prefect_ui else "--no-ui"], base_env)
            record("prefect-server", server)
            api = f"http://{HOST}:{prefect_port}/api"
            wait_http(f"{api}/health", timeout, server, self.logs / "prefect-server.log")
            state["prefect_api_url"] = api
            self._save(state)

            if mlflow_port:
                print(f"starting MLflow server on {HOST}:{mlflow_port} ...", flush=True)
                store = f"sqlite:///{(self.root / 'mlruns.db').as_posix()}"
                ml = self._spawn("mlflow-server", [
                    _bin("mlflow"), "server", "--host", HOST, "--port", str(mlflow_port),
                    "--workers", "1", "--backend-store-uri", store,
                    # the same artifact folder the sqlite store uses, written directly (this
                    # server is on loopback, so its clients share this disk): experiments and
                    # runs made through it stay usable by `dvc repro` without the server
                    "--default-artifact-root", (self.root / "mlartifacts").as_uri(),
                    "--no-serve-artifacts"], base_env)
                record("mlflow-server", ml)
                url = f"http://{HOST}:{mlflow_port}"
                wait_http(f"{url}/health", timeout, ml, self.logs / "mlflow-server.log")
                state["mlflow_url"] = url
                self._save(state)

            env = self.env(state)
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
        from prefect.settings import PREFECT_API_URL, temporary_settings

        from .deploy import FLOW_NAME

        name = deployment if "/" in deployment else f"{FLOW_NAME}/{deployment}"
        with temporary_settings(updates={PREFECT_API_URL: state["prefect_api_url"]}):
            run = run_deployment(name, parameters=parameters or {}, timeout=timeout if wait else 0)
        return {"flow_run_id": str(run.id), "name": run.name, "state": run.state.type.value,
                "message": run.state.message}


def _print_up(state: dict[str, Any], stack: Stack) -> None:
    print("\nthe stack is up:")
    print(f"  Prefect API   {state.get('prefect_api_url')}   (UI: {state['prefect_api_url'][:-4]})")
    if state.get("mlflow_url"):
        print(f"  MLflow UI     {state['mlflow_url']}")
    for d in state.get("deployments", []):
        print(f"  deployment    {d}")
    print(f"  logs          {stack.logs}")
    print("\ntrigger a run:  claimbench stack run [--profile smoke]")
    print("stop it all:    claimbench stack down")


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
    sub.add_parser("down", help="stop everything `up` started")
    sub.add_parser("status", help="what is running")
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
                             prefect_ui=not a.no_prefect_ui)
            _print_up(state, stack)
        elif a.action == "down":
            stack.down()
        elif a.action == "status":
            state, alive = stack.state(), stack.running()
            if not state:
                print("the stack is down")
                return 1
            for name, info in state["processes"].items():
                print(f"  {name:24s} pid {info['pid']:<8d} {'running' if name in alive else 'NOT RUNNING'}")
            print(f"  Prefect API {state.get('prefect_api_url')}   MLflow {state.get('mlflow_url')}")
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
