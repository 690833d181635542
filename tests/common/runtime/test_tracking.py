"""stages.common.runtime.tracking: one MLflow run per stage in a temporary sqlite store."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from stages.common.runtime import tracking
from stages.common.io import dvc_md5, stable_hash

from tests.helpers import isolate_env

PARAMS = {"a": {"b": 1, "c": [1, 2]}}


def _git(root: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
                          cwd=root, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A temp sqlite MLflow store and artifact root, set in the env for the whole module."""
    base = tmp_path_factory.mktemp("mlflow")
    with pytest.MonkeyPatch.context() as mp:
        isolate_env(mp, base)
        yield base


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """A committed git repo with a dep file, an out file and a tiny saved HF dataset."""
    import datasets

    root = tmp_path_factory.mktemp("repo")
    _git(root, "init", "-q")
    (root / "src").mkdir()
    (root / "src" / "dep.txt").write_text("dependency\n")
    (root / "out").mkdir()
    (root / "out" / "result.json").write_text(json.dumps({"r": 1}))
    datasets.Dataset.from_dict({"x": [1, 2, 3], "y": [0.5, 0.25, 0.125]}).save_to_disk(
        str(root / "data" / "ds"))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "init")
    return root


@pytest.fixture(scope="module")
def finished(store, repo):
    """A StageRun that logged metrics, a curve, a small file, an HF dataset, and finished."""
    run = tracking.StageRun("t_study", "train", "t_study-train", "smoke", PARAMS, root=repo,
                            deps=["src/dep.txt", "data/ds", "src/missing.txt"],
                            outs=["out/result.json", "data/ds"])
    run.log_metrics({"loss": 0.25, "nested": {"acc": 0.75}, "flag": True, "bad": float("nan"),
                     "name": "x"})
    run.log_curve("curve", [3.0, 2.0, 1.0], steps=[0, 10, 20])
    run.log_out("out/result.json")
    run.log_out("data/ds")
    run.log_out("out/not_there.json")
    run.finish()
    return run, tracking.client(repo).get_run(run.run_id)


def test_run_tags(finished, repo):
    """Tags: git commit (HEAD of the repo), clean, dvc.stage, profile, params.hash, study/step."""
    run, r = finished
    tags = r.data.tags
    assert tags["mlflow.source.git.commit"] == _git(repo, "rev-parse", "HEAD")
    assert len(tags["mlflow.source.git.commit"]) == 40
    assert tags["git.dirty"] == "false"
    assert tags["dvc.stage"] == "t_study-train"
    assert tags["profile"] == "smoke"
    assert tags["params.hash"] == stable_hash(PARAMS)
    assert tags["claimbench.study"] == "t_study" and tags["claimbench.step"] == "train"
    assert "mlflow.parentRunId" not in tags


def test_dep_tags_are_dvc_md5(finished, repo):
    """dep.<path> tags equal dvc_md5 of each existing dep (file and folder); missing deps are skipped."""
    _, r = finished
    tags = r.data.tags
    assert tags["dep.src/dep.txt"] == dvc_md5(repo / "src" / "dep.txt")
    assert tags["dep.data/ds"] == dvc_md5(repo / "data" / "ds")
    assert tags["dep.data/ds"].endswith(".dir")
    assert "dep.src/missing.txt" not in tags


def test_experiment_run_name_status(finished, store):
    """Experiment = study, run name = step, status FINISHED, artifacts under CLAIMBENCH_ARTIFACT_ROOT."""
    run, r = finished
    exp = run.client.get_experiment(r.info.experiment_id)
    assert exp.name == "t_study"
    assert exp.artifact_location == f"{(store / 'artifacts').as_uri()}/t_study"
    assert r.info.run_name == "train"
    assert r.info.status == "FINISHED"


def test_params_flattened(finished):
    """Params are flattened to dotted keys, non-strings JSON-encoded: a.b == '1', a.c == '[1, 2]'."""
    _, r = finished
    assert r.data.params == {"a.b": "1", "a.c": "[1, 2]"}


def test_metrics_numeric_only(finished):
    """log_metrics flattens, keeps numbers, drops booleans, strings and NaN."""
    _, r = finished
    m = r.data.metrics
    assert m["loss"] == 0.25 and m["nested.acc"] == 0.75
    assert "flag" not in m and "bad" not in m and "name" not in m


def test_curve_has_steps(finished):
    """log_curve stores one point per step: get_metric_history returns steps 0, 10, 20."""
    run, _ = finished
    hist = sorted(run.client.get_metric_history(run.run_id, "curve"), key=lambda m: m.step)
    assert [(m.step, m.value) for m in hist] == [(0, 3.0), (10, 2.0), (20, 1.0)]


def test_small_file_out_is_artifact(finished, repo, tmp_path):
    """A small file out is logged as an artifact under outs/<its folder>, with the same bytes."""
    run, _ = finished
    paths = [a.path for a in run.client.list_artifacts(run.run_id, "outs/out")]
    assert paths == ["outs/out/result.json"]
    local = run.client.download_artifacts(run.run_id, "outs/out/result.json", str(tmp_path))
    assert Path(local).read_bytes() == (repo / "out" / "result.json").read_bytes()


def test_hf_dataset_out_is_dataset_input(finished, repo):
    """An HF dataset out becomes a dataset input with a digest and context = step, plus a manifest."""
    run, r = finished
    inputs = r.inputs.dataset_inputs
    assert len(inputs) == 1
    ds = inputs[0].dataset
    assert ds.digest and ds.name == "ds:all"
    assert {t.key: t.value for t in inputs[0].tags}["mlflow.data.context"] == "train"
    paths = [a.path for a in run.client.list_artifacts(run.run_id, "manifests/data")]
    assert paths == ["manifests/data/ds.json"]


def test_manifest_for_large_file(store, repo, monkeypatch, tmp_path):
    """A file above ARTIFACT_MAX_BYTES is logged as a manifest (path, size, md5, dvc_md5), not copied."""
    monkeypatch.setattr(tracking, "ARTIFACT_MAX_BYTES", 4)
    run = tracking.StageRun("t_study", "big", "t_study-big", "smoke", {}, root=repo)
    run.log_out("out/result.json")
    run.finish()
    assert run.client.list_artifacts(run.run_id, "outs") == []
    local = run.client.download_artifacts(run.run_id, "manifests/out/result.json.json",
                                          str(tmp_path))
    man = json.loads(Path(local).read_text())
    f = repo / "out" / "result.json"
    assert man["path"] == "out/result.json" and man["dvc_md5"] == dvc_md5(f)
    assert man["files"] == [{"relpath": "result.json", "size": f.stat().st_size,
                             "md5": dvc_md5(f)}]


def test_log_model_is_a_loadable_logged_model(store, repo, tmp_path):
    """A saved pyfunc folder becomes a logged model of the run; loading it by id predicts."""
    import mlflow.pyfunc

    code = tmp_path / "double.py"
    code.write_text("import mlflow.pyfunc\n\n\nclass Double(mlflow.pyfunc.PythonModel):\n"
                    "    def predict(self, context, model_input, params=None):\n"
                    "        return [2 * x for x in model_input]\n\n\nmlflow.models.set_model(Double())\n")
    mlflow.pyfunc.save_model(str(tmp_path / "model"), python_model=str(code), pip_requirements=[],
                             input_example=np.array([1.0, 2.0]))
    mlflow.pyfunc.save_model(str(tmp_path / "unsigned"), python_model=str(code), pip_requirements=[])
    run = tracking.StageRun("t_study", "model", "t_study-model", "smoke", {}, root=repo)
    model_id = run.log_model(tmp_path / "model", "double", params={"k": {"n": 3}})
    run.finish()
    m = run.client.get_logged_model(model_id)
    assert m.name == "double" and m.source_run_id == run.run_id and m.params == {"k.n": "3"}
    assert list(mlflow.pyfunc.load_model(f"models:/{model_id}").predict(np.array([1.0, 2.0]))) == [2.0, 4.0]
    with pytest.raises(FileNotFoundError, match="has no MLmodel file"):
        run.log_model(tmp_path, "nothing")
    with pytest.raises(ValueError, match="has no input and output signature"):   # the registry would show none
        run.log_model(tmp_path / "unsigned", "unsigned")


def test_parent_run_tag(store, repo, monkeypatch):
    """With CLAIMBENCH_PARENT_RUN_ID set, the stage run is tagged as the flow run's child."""
    parent = tracking.open_flow_run("flow-1", tags={"k": "v"}, root=repo)
    monkeypatch.setenv(tracking.PARENT_ENV, parent)
    run = tracking.StageRun("t_study", "evaluate", "t_study-evaluate", "smoke", {}, root=repo)
    run.finish()
    r = run.client.get_run(run.run_id)
    assert r.data.tags["mlflow.parentRunId"] == parent
    p = run.client.get_run(parent)
    assert run.client.get_experiment(p.info.experiment_id).name == "pipeline"
    assert p.data.tags["k"] == "v"


def test_ensure_experiment_is_idempotent(store, repo):
    """ensure_experiment returns the same id on a second call instead of failing."""
    assert tracking.ensure_experiment("t_idem", repo) == tracking.ensure_experiment("t_idem", repo)


def test_tracking_uri_from_env_and_default(monkeypatch, tmp_path):
    """MLFLOW_TRACKING_URI wins; without it the store is <root>/mlruns.db and artifacts <root>/mlartifacts."""
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:///x.db")
    assert tracking.tracking_uri(tmp_path) == "sqlite:///x.db"
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    monkeypatch.delenv("CLAIMBENCH_ARTIFACT_ROOT", raising=False)
    assert tracking.tracking_uri(tmp_path) == f"sqlite:///{(tmp_path / 'mlruns.db').as_posix()}"
    assert tracking.artifact_root(tmp_path) == (tmp_path / "mlartifacts").as_uri()


# --------------------------------------------------------------------------------------
# git_info
# --------------------------------------------------------------------------------------
def test_git_info_dirty_ignores_outs_and_lock(tmp_path):
    """A modified tracked dep makes the tree dirty; modified outs and dvc.lock do not."""
    _git(tmp_path, "init", "-q")
    for name in ("dep.txt", "out.txt", "dvc.lock"):
        (tmp_path / name).write_text("v1\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "init")
    (tmp_path / "untracked.txt").write_text("u\n")
    assert tracking.git_info(tmp_path, ignore=["out.txt"])["git.dirty"] == "false"
    (tmp_path / "out.txt").write_text("v2\n")
    (tmp_path / "dvc.lock").write_text("v2\n")
    assert tracking.git_info(tmp_path, ignore=["out.txt"])["git.dirty"] == "false"
    (tmp_path / "dep.txt").write_text("v2\n")
    info = tracking.git_info(tmp_path, ignore=["out.txt"])
    assert info["git.dirty"] == "true"
    assert info["mlflow.source.git.commit"] == _git(tmp_path, "rev-parse", "HEAD")


def test_git_info_outside_git_is_none(tmp_path):
    """Outside any git repository the commit is recorded as 'none'."""
    assert tracking.git_info(tmp_path)["mlflow.source.git.commit"] == "none"


def test_git_info_repo_without_commits_is_none(tmp_path):
    """A git repo with no commit yet has no HEAD: the commit must be 'none', not the literal 'HEAD'."""
    _git(tmp_path, "init", "-q")
    assert tracking.git_info(tmp_path)["mlflow.source.git.commit"] == "none"


# --------------------------------------------------------------------------------------
# retry
# --------------------------------------------------------------------------------------
def test_retry_on_database_locked_then_succeeds():
    """Two 'database is locked' OperationalErrors are retried; the third call's value is returned."""
    calls = []

    def fn():
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "ok"

    assert tracking.retry(fn, attempts=5, base=0.0) == "ok"
    assert len(calls) == 3


def test_retry_gives_up_after_attempts():
    """A lock that never clears is re-raised after exactly `attempts` calls."""
    calls = []

    def fn():
        calls.append(1)
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(sqlite3.OperationalError):
        tracking.retry(fn, attempts=3, base=0.0)
    assert len(calls) == 3


def test_retry_does_not_retry_value_error():
    """A ValueError is not transient: raised on the first call."""
    calls = []

    def fn():
        calls.append(1)
        raise ValueError("bad value")

    with pytest.raises(ValueError):
        tracking.retry(fn, attempts=5, base=0.0)
    assert len(calls) == 1


def test_retry_knows_transient_errors_by_type_not_text():
    """MLflow's TEMPORARILY_UNAVAILABLE raised from SQLAlchemy's OperationalError is retried; a
    message that merely mentions a connection or a unique constraint is not; a name taken by
    another process is retried only for a get-or-create."""
    import sqlalchemy.exc
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import INTERNAL_ERROR, RESOURCE_ALREADY_EXISTS, TEMPORARILY_UNAVAILABLE

    def failing(excs):
        calls = []

        def fn():
            calls.append(1)
            if len(calls) <= len(excs):
                raise excs[len(calls) - 1]
            return "ok"
        return fn, calls

    def locked():
        try:
            raise sqlalchemy.exc.OperationalError("INSERT", {}, Exception("database is locked"))
        except sqlalchemy.exc.OperationalError as e:
            try:
                raise MlflowException("database is locked", error_code=TEMPORARILY_UNAVAILABLE) from e
            except MlflowException as m:
                return m

    fn, calls = failing([locked(), MlflowException("busy", error_code=TEMPORARILY_UNAVAILABLE)])
    assert tracking.retry(fn, attempts=5, base=0.0) == "ok" and len(calls) == 3
    for text in ("connection reset while creating the run", "UNIQUE constraint failed: runs.run_uuid"):
        fn, calls = failing([MlflowException(text, error_code=INTERNAL_ERROR)])
        with pytest.raises(MlflowException):
            tracking.retry(fn, attempts=5, base=0.0)
        assert len(calls) == 1
    taken = MlflowException("experiment 's' already exists", error_code=RESOURCE_ALREADY_EXISTS)
    fn, calls = failing([taken])
    with pytest.raises(MlflowException):
        tracking.retry(fn, attempts=5, base=0.0)
    fn, calls = failing([taken])
    assert tracking.retry(fn, attempts=5, base=0.0, get_or_create=True) == "ok" and len(calls) == 2
