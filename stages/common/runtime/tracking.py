"""The one MLflow tracking helper.

``StageRun`` opens one MLflow run per stage: experiment = study, run name = step. It tags
the run with the git commit and dirty flag, the DVC stage, the profile, a hash of the
params and the DVC hashes of the stage's deps; logs the flattened params; and, when the
stage finishes, logs every metric in its metrics files, every plot, and every out (HF
datasets as MLflow dataset inputs with their digest, small files as artifacts, large
folders as manifests).

The store is ``$MLFLOW_TRACKING_URI`` or a local sqlite file at the repository root
(``mlruns.db``, artifacts in ``mlartifacts/``). SQLite refuses concurrent writers at times
("database is locked"); every call retries, and the Prefect flow creates the store and
the experiments before it fans out. Against an ``http(s)://`` tracking server the server
chooses where artifacts go (``mlflow server --artifacts-destination``). A parent run id in
``$CLAIMBENCH_PARENT_RUN_ID`` nests the stage run under a flow run.

A stage that raises marks its run FAILED with the error (tag ``claimbench.error``, the
traceback as ``error.txt``). A stage killed outright (SIGKILL, out of memory) cannot; its
run is left RUNNING, and :func:`reap_orphans` marks it FAILED the next time any tracked stage
starts (it looks in every experiment) or when the flow sees the stage die (every run records
its host and pid).
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import traceback
from pathlib import Path
from typing import Any, Iterable

from stages.common.io import dvc_md5, stable_hash
from stages.common.runtime.mlflow_client import (  # noqa: F401 - tracking.client etc. for its callers
    artifact_root, client, conflict, is_server, retry, sigterm_deferred, tracking_uri, transient)
from stages.common.runtime.params import flatten, repo_root

ARTIFACT_MAX_BYTES = 20 * 1024 * 1024
PARENT_ENV = "CLAIMBENCH_PARENT_RUN_ID"
# MLflow's reserved tags (mlflow.utils.mlflow_tags): the run page's "Source" and "Created by"
GIT_COMMIT_TAG, SOURCE_NAME_TAG, SOURCE_TYPE_TAG, USER_TAG = (
    "mlflow.source.git.commit", "mlflow.source.name", "mlflow.source.type", "mlflow.user")
ERROR_TAG, HOST_TAG, PID_TAG = "claimbench.error", "claimbench.host", "claimbench.pid"




def ensure_experiment(name: str, root: Path | None = None) -> str:
    """Create (once) and return the id of experiment ``name``, tagged so the MLflow UI opens it on
    its runs, with a saved view of the study's claim metrics (:func:`.registry.experiment_tags`;
    an experiment made before these tags gets them here)."""
    from stages.common.runtime.registry import experiment_tags, tags_to_update

    root = root or repo_root()
    c = client(root)
    wanted = experiment_tags(root, name)

    def get_or_create() -> str:
        exp = c.get_experiment_by_name(name)
        if exp is not None:
            for k, v in tags_to_update(exp.tags, wanted).items():
                c.set_experiment_tag(exp.experiment_id, k, v)
            return exp.experiment_id
        base = artifact_root(root)
        return c.create_experiment(name, artifact_location=f"{base}/{name}" if base else None,
                                   tags=wanted)

    return retry(get_or_create, get_or_create=True)


def _user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):       # no name for this uid (a container)
        return str(os.getuid())


def git_info(root: Path, ignore: Iterable[str] = ()) -> dict[str, str]:
    """The commit (MLflow's reserved ``mlflow.source.git.commit``; ``none`` outside git) and
    whether tracked files other than the stage's outs and dvc.lock differ from it (``git.dirty``)."""
    def git(*args: str) -> str:
        try:
            proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                                  timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return proc.stdout.strip() if proc.returncode == 0 else ""

    commit = git("rev-parse", "--verify", "-q", "HEAD") or "none"
    excludes = [f":(exclude){p}" for p in ("dvc.lock", *ignore)]
    dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", ".", *excludes))
    return {GIT_COMMIT_TAG: commit, "git.dirty": str(dirty).lower()}


class StageRun:
    """An open MLflow run for one DVC stage. Use through :func:`stages.common.runtime.stage.stage`."""

    def __init__(self, study: str, step: str, stage_name: str, profile: str,
                 params: dict[str, Any], root: Path | None = None,
                 deps: list[str] | None = None, outs: list[str] | None = None,
                 dep_hashes: dict[str, str] | None = None, process: dict[str, Any] | None = None,
                 parent: str | None = None, threads: str | None = None):
        """``process`` (host, pid), ``parent`` (a flow's run id) and ``threads`` describe the stage's
        process; they default to this process's (the tracking agent passes the stage's)."""
        self.root = root or repo_root()
        self.study, self.step, self.stage_name = study, step, stage_name
        self.deps, self.outs = list(deps or []), list(outs or [])
        self.client = client(self.root)
        exp_id = ensure_experiment(study, self.root)
        tags = {
            "claimbench.study": study,
            "claimbench.step": step,
            "dvc.stage": stage_name,
            "profile": profile,
            "params.hash": stable_hash(params),
            **(process_tags() if process is None else
               {HOST_TAG: str(process["host"]), PID_TAG: str(process["pid"])}),
            "claimbench.threads": threads or os.environ.get("OMP_NUM_THREADS", "all cores"),
            SOURCE_NAME_TAG: stage_name, SOURCE_TYPE_TAG: "LOCAL", USER_TAG: _user(),
            **git_info(self.root, ignore=self.outs),
        }
        self.dep_hashes = dep_hashes if dep_hashes is not None else hash_deps(self.root, self.deps)
        for d, md5 in self.dep_hashes.items():
            tags[f"dep.{d}"] = md5
        reap_orphans(self.client)      # every study's: the one that left it may not run again
        parent = os.environ.get(PARENT_ENV) if process is None else parent
        if parent:
            tags["mlflow.parentRunId"] = parent
        self.tags = tags
        self.versions: list[tuple[str, str]] = []      # (registered model, version) logged here
        self.run_id = None
        try:
            with sigterm_deferred():
                self.run_id = retry(lambda: self.client.create_run(
                    exp_id, run_name=step, tags=tags).info.run_id)
            self.log_params(params)
        except BaseException as exc:          # e.g. SIGTERM while logging: the run exists, close it
            if self.run_id is not None:
                self.fail(exc)
            raise

    # -- logging primitives (all retried) ---------------------------------------------
    def log_params(self, params: dict[str, Any]) -> None:
        from mlflow.entities import Param

        flat = flatten(params)
        items = [Param(k, json.dumps(v) if not isinstance(v, str) else v)
                 for k, v in sorted(flat.items())]
        for i in range(0, len(items), 100):
            chunk = items[i:i + 100]
            retry(lambda: self.client.log_batch(self.run_id, params=chunk))

    def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        items = [Metric(k, float(v), now, step or 0) for k, v in flatten(metrics).items()
                 if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v]
        self._log_metric_items(items)

    def log_curve(self, key: str, values: Iterable[float], steps: Iterable[int] | None = None) -> None:
        """A metric with steps (a loss curve)."""
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        values = list(values)
        steps = list(steps) if steps is not None else list(range(len(values)))
        self._log_metric_items([Metric(key, float(v), now, int(s)) for v, s in zip(values, steps)
                                if v == v])

    def _log_metric_items(self, items: list) -> None:
        for i in range(0, len(items), 1000):
            chunk = items[i:i + 1000]
            retry(lambda: self.client.log_batch(self.run_id, metrics=chunk))

    def set_tags(self, tags: dict[str, Any]) -> None:
        for k, v in tags.items():
            retry(lambda: self.client.set_tag(self.run_id, k, str(v)))

    def log_artifact(self, path: str | os.PathLike, artifact_path: str | None = None) -> None:
        path = Path(path)
        if path.is_dir():
            retry(lambda: self.client.log_artifacts(self.run_id, str(path), artifact_path))
        else:
            retry(lambda: self.client.log_artifact(self.run_id, str(path), artifact_path))

    def log_dict(self, obj: Any, artifact_file: str) -> None:
        retry(lambda: self.client.log_dict(self.run_id, obj, artifact_file))

    def log_hf_dataset(self, path: str | os.PathLike, context: str) -> None:
        """Log a saved Hugging Face dataset (folder from save_to_disk) as MLflow dataset inputs."""
        import datasets
        import mlflow.data
        from mlflow.entities import DatasetInput, InputTag

        path = Path(path)
        loaded = datasets.load_from_disk(str(path))
        splits = loaded.items() if isinstance(loaded, datasets.DatasetDict) else [("all", loaded)]
        inputs = []
        for split, ds in splits:
            mds = mlflow.data.from_huggingface(ds, path=str(path), name=f"{path.name}:{split}")
            inputs.append(DatasetInput(dataset=mds._to_mlflow_entity(),
                                       tags=[InputTag("mlflow.data.context", context)]))
        retry(lambda: self.client.log_inputs(self.run_id, datasets=inputs))

    def log_model(self, model_dir: str | os.PathLike, name: str, params: dict[str, Any] | None = None) -> str:
        """Log a saved MLflow model folder (one with an ``MLmodel`` file, e.g. from
        ``mlflow.pyfunc.save_model``) as an MLflow *logged model* of this run (the run's Models
        tab; ``mlflow.pyfunc.load_model("models:/<model_id>")``), and register it as a new
        version of the registered model ``<study>-<name>``, tagged with the commit, the profile
        and the DVC hashes of the stage's data deps (:mod:`.registry`). Returns the model id."""
        from stages.common.runtime.registry import register, registered_name, version_tags

        from mlflow.entities import LoggedModelOutput

        model_dir = Path(model_dir)
        if not (model_dir / "MLmodel").is_file():
            raise FileNotFoundError(f"log_model: {model_dir} has no MLmodel file (save the model with "
                                    f"mlflow.<flavor>.save_model first)")
        import yaml

        signature = (yaml.safe_load((model_dir / "MLmodel").read_text()) or {}).get("signature") or {}
        if not (signature.get("inputs") and signature.get("outputs")):
            raise ValueError(f"log_model: {model_dir} has no input and output signature: save it with "
                             f"stages.common.mlmodel.save_pyfunc and an input_example, so the registry "
                             f"shows what the model takes and returns")
        exp_id = self.client.get_run(self.run_id).info.experiment_id
        flat = {k: str(v) for k, v in flatten(params or {}).items()}
        model = retry(lambda: self.client.create_logged_model(exp_id, name=name, source_run_id=self.run_id,
                                                              params=flat or None))
        retry(lambda: self.client.log_model_artifacts(model.model_id, str(model_dir)))
        retry(lambda: self.client.finalize_logged_model(model.model_id, "READY"))
        retry(lambda: self.client.log_outputs(self.run_id, [LoggedModelOutput(model.model_id, 0)]))
        reg = registered_name(self.study, name)
        version = register(self.client, reg, model.model_id, self.run_id,
                           version_tags(self.tags, self.deps),
                           description=f"made by DVC stage {self.stage_name}")
        self.versions.append((reg, version))
        self.set_tags({f"model.{name}": f"{reg} version {version}"})
        return model.model_id

    def alias_models(self, alias: str) -> list[str]:
        """Point ``alias`` of each registered model at the version that made the metrics files now
        in the workspace (the ledger calls it with ``ledger``; :func:`.registry.set_ledger_alias`);
        prints and returns what it did."""
        from stages.common.runtime.registry import set_ledger_alias

        lines = set_ledger_alias(self.client, self.root, alias)
        for line in lines:
            print(f"  model {line}", flush=True)
        return lines

    # -- what a finished stage logs ---------------------------------------------------
    def log_metrics_file(self, path: str | os.PathLike) -> None:
        path = self.root / path
        if path.suffix == ".json" and path.exists():
            self.log_metrics(json.loads(path.read_text()))

    def log_out(self, rel: str) -> None:
        path = self.root / rel
        if not path.exists():
            return
        if path.is_dir() and ((path / "dataset_dict.json").exists() or
                              (path / "dataset_info.json").exists()):
            self.log_hf_dataset(path, context=self.step)
            self.log_dict(manifest(path, self.root), f"manifests/{rel}.json")
        elif path.is_file() and path.stat().st_size <= ARTIFACT_MAX_BYTES:
            sub = Path("outs") / Path(rel).parent
            self.log_artifact(path, sub.as_posix())
        elif path.is_dir() and dir_size(path) <= ARTIFACT_MAX_BYTES:
            self.log_artifact(path, (Path("outs") / rel).as_posix())
        else:
            self.log_dict(manifest(path, self.root), f"manifests/{rel}.json")

    def finish_stage(self, metrics: list[str], outs: list[str], timings: dict[str, float]) -> None:
        """What a stage logs when its body returns: every metrics file, every out, its timings
        (``stage.setup_s``, ``stage.compute_s``, plus ``stage.logging_s``); then FINISHED."""
        t0 = time.perf_counter()
        if self.versions:
            from stages.common.runtime.registry import record_metrics_files

            record_metrics_files(self.client, self.versions, self.root, metrics)
        for m in metrics:
            self.log_metrics_file(m)
        for o in outs:
            self.log_out(o)
        self.log_metrics({**timings, "stage.logging_s": time.perf_counter() - t0})
        self.finish()

    def close(self) -> None:
        """Nothing to release in-process (the agent's :class:`RemoteRun` closes its connection)."""

    def finish(self, status: str = "FINISHED") -> None:
        retry(lambda: self.client.set_terminated(self.run_id, status))

    def fail(self, exc: BaseException) -> None:
        """Mark the run FAILED with the error: a one-line tag, the note, the traceback."""
        record_failure(self.client, self.run_id, error_line(exc),
                       "".join(traceback.format_exception(exc)))


class NullRun:
    """What a stage logs to when tracking is off (``CLAIMBENCH_TRACKING=off``): nothing."""

    run_id = None

    def __getattr__(self, name: str):
        if name.startswith("log_") or name in ("set_tags", "finish", "finish_stage", "fail", "close"):
            return lambda *args, **kwargs: None
        if name == "alias_models":
            return lambda *args, **kwargs: []
        raise AttributeError(name)


def hash_deps(root: Path, deps: Iterable[str]) -> dict[str, str]:
    """The DVC hash of every existing dep (what dvc.lock would record)."""
    return {d: dvc_md5(root / d) for d in deps if (root / d).exists()}


def error_line(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"exit status {exc.code}" if not isinstance(exc.code, str) else exc.code
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


def record_failure(c, run_id: str, message: str, details: str | None = None,
                   status: str = "FAILED") -> None:
    """Tag a run with why it failed (tag, run description, ``error.txt``) and end it."""
    retry(lambda: c.set_tag(run_id, ERROR_TAG, message[:4000]))
    retry(lambda: c.set_tag(run_id, "mlflow.note.content",
                            f"**{status}**: {message}" + (f"\n\n```\n{details[-8000:]}\n```"
                                                            if details else "")))
    if details:
        retry(lambda: c.log_text(run_id, details, "error.txt"))
    retry(lambda: c.set_terminated(run_id, status))


def _process_alive_since(pid: int, start_ms: int) -> bool:
    """True when process ``pid`` exists and was started before ``start_ms`` (not a reused pid)."""
    import psutil

    try:
        return psutil.Process(pid).create_time() * 1000 <= start_ms + 1000
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return False


def reap_orphans(c, exp_id: str | None = None) -> list[str]:
    """Mark FAILED the RUNNING runs of experiment ``exp_id`` (default: of every experiment) whose
    process (on this host) is gone.

    A stage killed with SIGKILL (or by the out-of-memory killer) cannot close its run; this
    closes it with the reason, so the MLflow UI never shows a dead stage as running. Runs from
    other hosts, and runs whose process is alive, are left alone. A starting stage reaps every
    experiment: when the tracking agent is killed together with a stage, nothing else closes
    that run, and `dvc repro` may restore the stage from its run cache, so that no stage of its
    study need ever run again.
    """
    host = socket.gethostname()
    ids = [exp_id] if exp_id is not None else [
        e.experiment_id for e in retry(lambda: c.search_experiments(max_results=1000))]
    if not ids:
        return []
    runs = retry(lambda: c.search_runs(ids, filter_string="attributes.status = 'RUNNING'",
                                       max_results=1000))
    reaped = []
    for r in runs:
        tags = r.data.tags
        if tags.get(HOST_TAG) != host or not tags.get(PID_TAG, "").isdigit():
            continue
        pid = int(tags[PID_TAG])
        if pid == os.getpid() or _process_alive_since(pid, r.info.start_time):
            continue
        what = f"stage {tags['dvc.stage']}" if "dvc.stage" in tags else "flow"
        record_failure(c, r.info.run_id,
                       f"the {what} process (pid {pid} on {host}) ended without closing its run: "
                       "killed (SIGKILL, out of memory) or crashed")
        reaped.append(r.info.run_id)
    return reaped


def process_tags() -> dict[str, str]:
    """Host and pid, so a run whose process died can be told from one still running."""
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid())}


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def manifest(path: Path, root: Path) -> dict[str, Any]:
    """What an out holds without copying it: files, sizes, md5s, and the DVC hash."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    from stages.common.io import file_md5

    return {
        "path": path.relative_to(root).as_posix(),
        "dvc_md5": dvc_md5(path),
        "files": [{"relpath": p.relative_to(path if path.is_dir() else path.parent).as_posix(),
                   "size": p.stat().st_size, "md5": file_md5(p)} for p in files],
    }


def open_flow_run(name: str, tags: dict[str, str] | None = None, root: Path | None = None) -> str:
    """Create the parent run of a flow run (experiment ``pipeline``); returns its id."""
    c = client(root)
    exp_id = ensure_experiment("pipeline", root)
    reap_orphans(c, exp_id)
    tags = {**(tags or {}), **process_tags()}
    return retry(lambda: c.create_run(exp_id, run_name=name, tags=tags).info.run_id)


def open_study_parent(study: str, flow_run_id: str, name: str, root: Path | None = None) -> str:
    """A run in the study's experiment that stands for the flow run there.

    The MLflow UI nests runs only within one experiment, so the flow's stage runs nest under
    this run (experiment = study), and it nests under the flow's run in ``pipeline``.
    """
    c = client(root)
    exp_id = ensure_experiment(study, root)
    tags = {"mlflow.parentRunId": flow_run_id, "claimbench.flow_run_id": flow_run_id,
            "claimbench.kind": "flow", **process_tags()}
    return retry(lambda: c.create_run(exp_id, run_name=name, tags=tags).info.run_id)

