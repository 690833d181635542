"""stages.common.runtime.registry: logged models become registered model versions with their provenance,
the ``ledger`` alias follows the metrics files in the workspace, experiments open on their runs.
In a temporary sqlite store (unit) and against `mlflow server` (machinery); the smoke build's
registered models are loaded by alias in tests/common/runtime/test_registry_smoke.py."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stages.common.runtime import tracking
from stages.common.io import dvc_md5

from tests.helpers import REPO, isolate_env

DOUBLE = ("import mlflow.pyfunc\n\n\nclass Double(mlflow.pyfunc.PythonModel):\n"
          "    def predict(self, context, model_input, params=None):\n"
          "        return [2 * x for x in model_input]\n\n\nmlflow.models.set_model(Double())\n")


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory) -> Path:
    """A tiny pyfunc model folder (predict doubles its input)."""
    import mlflow.pyfunc

    base = tmp_path_factory.mktemp("model")
    (base / "double.py").write_text(DOUBLE)
    mlflow.pyfunc.save_model(str(base / "model"), python_model=str(base / "double.py"), pip_requirements=[],
                             input_example=np.array([1.0, 2.0]))
    return base / "model"


def _repo(root: Path) -> Path:
    """A git repo with a code dep, a data folder dep and a metrics file a stage writes."""
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "stages/t_study").mkdir(parents=True)
    (root / "stages/t_study/train.py").write_text("# code\n")
    (root / "data/t_study/ds/sub").mkdir(parents=True)
    (root / "data/t_study/ds/a.txt").write_text("alpha\n")
    (root / "data/t_study/ds/sub/b.txt").write_text("beta\n")
    (root / "reports/t_study").mkdir(parents=True)
    subprocess.run(["git", "-c", "user.email=t@e", "-c", "user.name=t", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "init"], cwd=root,
                   check=True)
    return root


DEPS = ["stages/t_study/train.py", "data/t_study/ds"]
METRICS = "reports/t_study/train.json"


def _default_store(mp: pytest.MonkeyPatch, base: Path) -> None:
    """As in a stage and the tracking agent: no $MLFLOW_TRACKING_URI (the store is the repo's
    mlruns.db), so MLflow's own default store (mlflow.db in the working folder) is another."""
    isolate_env(mp, base)
    mp.delenv("MLFLOW_TRACKING_URI")
    mp.delenv("CLAIMBENCH_ARTIFACT_ROOT")
    mp.chdir(base)


def _train(root: Path, model: Path, loss: float) -> tracking.StageRun:
    """One training stage run: log the model, write the metrics file, finish."""
    run = tracking.StageRun("t_study", "train", "t_study-train", "smoke", {"k": 1}, root=root, deps=DEPS,
                            outs=[METRICS])
    run.log_model(model, "double")
    (root / METRICS).write_text(json.dumps({"loss": loss}))
    run.finish_stage([METRICS], [], {"stage.compute_s": 0.1})
    return run


def dvc_hash(path: Path) -> str:
    """The md5 DVC records for ``path`` in dvc.lock, from DVC's own hashing (``dvc_data``, what
    ``dvc repro`` and ``dvc commit`` use): the reference for io.dvc_md5."""
    from dvc_data.hashfile.build import build
    from dvc_data.hashfile.db import HashFileDB
    from dvc_objects.fs.local import LocalFileSystem
    from dvc_objects.fs.memory import MemoryFileSystem

    staging = HashFileDB(MemoryFileSystem(), "/staging")      # dry_run: nothing is stored
    _, _, obj = build(staging, str(Path(path).resolve()), LocalFileSystem(), "md5", dry_run=True)
    return obj.hash_info.value


def test_dvc_hash_is_dvcs(tmp_path):
    """DVC's own hashing gives what claimbench's io.dvc_md5 (the dep tags of every run, the
    versions' training-data and metrics-file tags) gives, for a file and for a folder (``.dir``);
    a changed byte changes it."""
    root = _repo(tmp_path)
    ds = root / "data/t_study/ds"
    assert dvc_hash(ds) == dvc_md5(ds) and dvc_hash(ds).endswith(".dir")
    assert dvc_hash(ds / "a.txt") == dvc_md5(ds / "a.txt")
    before = dvc_hash(ds)
    (ds / "sub/b.txt").write_text("beta!\n")
    assert dvc_hash(ds) != before


def test_log_model_registers_a_tagged_version(tmp_path, monkeypatch, saved_model):
    """Each log_model adds a version of `<study>-<name>`, tagged with the commit, profile, stage
    and the DVC hash of the data dep (not of the code dep); finishing adds the metrics file's md5."""
    _default_store(monkeypatch, tmp_path)
    root = _repo(tmp_path / "repo")
    runs = [_train(root, saved_model, loss) for loss in (0.5, 0.25)]
    c = tracking.client(root)
    versions = sorted(c.search_model_versions("name = 't_study-double'"), key=lambda v: int(v.version))
    assert [str(v.version) for v in versions] == ["1", "2"]
    assert [v.run_id for v in versions] == [r.run_id for r in runs]
    tags = versions[1].tags
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    assert tags["mlflow.source.git.commit"] == commit and tags["profile"] == "smoke" and tags["dvc.stage"] == "t_study-train"
    assert tags["training_data.data/t_study/ds"] == dvc_md5(root / "data/t_study/ds")
    assert not any(k.startswith("training_data.stages/") for k in tags)
    assert tags["metrics_file." + METRICS] == dvc_md5(root / METRICS)
    assert versions[0].tags["metrics_file." + METRICS] != tags["metrics_file." + METRICS]
    assert c.get_run(runs[1].run_id).data.tags["model.double"] == "t_study-double version 2"


def test_ledger_alias_follows_the_metrics_in_the_workspace(tmp_path, monkeypatch, saved_model):
    """The alias goes to the version whose run wrote the metrics file now in the workspace; it
    moves when the file is the older run's again, and goes when no version wrote it. Loading
    `models:/<name>@ledger` predicts."""
    import mlflow.pyfunc

    _default_store(monkeypatch, tmp_path)
    root = _repo(tmp_path / "repo")
    _train(root, saved_model, 0.5)
    first = (root / METRICS).read_text()
    _train(root, saved_model, 0.25)
    run = tracking.StageRun("ledger", "build", "ledger", "smoke", {}, root=root)
    c = run.client
    assert run.alias_models("ledger") == ["t_study-double@ledger = version 2 (run "
                                          f"{c.get_model_version('t_study-double', '2').run_id})"]
    assert str(c.get_model_version_by_alias("t_study-double", "ledger").version) == "2"
    (root / METRICS).write_text(first)
    run.alias_models("ledger")
    assert str(c.get_model_version_by_alias("t_study-double", "ledger").version) == "1"
    assert not (tmp_path / "mlflow.db").exists()            # nothing went to MLflow's default store
    monkeypatch.setenv("MLFLOW_TRACKING_URI", tracking.tracking_uri(root))    # as the README says
    model = mlflow.pyfunc.load_model("models:/t_study-double@ledger")
    assert list(model.predict(np.array([1.0, 2.0]))) == [2.0, 4.0]
    (root / METRICS).write_text('{"loss": 9}')
    assert "removed" in run.alias_models("ledger")[0]
    assert "ledger" not in c.get_registered_model("t_study-double").aliases
    run.finish()


def test_null_run_alias_is_a_no_op():
    assert tracking.NullRun().alias_models("ledger") == []


def test_experiment_opens_on_runs_with_the_claims_view(tmp_path, monkeypatch):
    """A study's experiment is of kind custom_model_development and carries a saved view whose
    columns are the profile, the stage, its compute time and every claim metric of its claims.yaml;
    an experiment made without them gets them, and an unchanged view is not rewritten."""
    import yaml

    isolate_env(monkeypatch, tmp_path)
    exp_id = tracking.ensure_experiment("zipf_bigram", REPO)
    c = tracking.client(REPO)
    tags = c.get_experiment(exp_id).tags
    assert tags["mlflow.experimentKind"] == "custom_model_development"
    view = json.loads(tags["mlflow.sharedViewState.claims"])
    cols = json.loads(view["state"])["selectedColumns"]
    claims = yaml.safe_load((REPO / "stages/zipf_bigram/claims.yaml").read_text())["claims"]
    assert cols[:3] == ["tags.`profile`", "tags.`dvc.stage`", "metrics.`stage.compute_s`"]
    assert {f"metrics.`{cl['metric']}`" for cl in claims} <= set(cols)
    assert view["name"] == "claims" and isinstance(view["createdAt"], int)
    tracking.ensure_experiment("zipf_bigram", REPO)
    assert c.get_experiment(exp_id).tags["mlflow.sharedViewState.claims"] == tags["mlflow.sharedViewState.claims"]
    old = c.create_experiment("old_study")                  # made before this change: no tags
    assert tracking.ensure_experiment("old_study", REPO) == old
    assert c.get_experiment(old).tags["mlflow.experimentKind"] == "custom_model_development"
    assert json.loads(json.loads(c.get_experiment(old).tags["mlflow.sharedViewState.claims"])["state"]) == {
        "selectedColumns": cols[:4]}


@pytest.mark.machinery
def test_registration_and_alias_against_a_tracking_server(tmp_path, monkeypatch, saved_model, sub_env):
    """The same through `mlflow server` (HTTP, served artifacts): the version is registered with
    its tags, the alias set, and `models:/t_study-double@ledger` loads and predicts."""
    import mlflow.pyfunc
    import psutil

    from flows.stack import free_port, stop_trees, wait_http

    port = free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "mlflow"), "server", "--host", "127.0.0.1", "--port", str(port),
         "--workers", "1", "--backend-store-uri", f"sqlite:///{tmp_path / 'server.db'}",
         "--artifacts-destination", str(tmp_path / "served")],
        env=sub_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_http(f"{url}/health", 120, server)
        isolate_env(monkeypatch, tmp_path)
        monkeypatch.setenv("MLFLOW_TRACKING_URI", url)
        monkeypatch.delenv("CLAIMBENCH_ARTIFACT_ROOT")
        root = _repo(tmp_path / "repo")
        run = _train(root, saved_model, 0.5)
        c = tracking.client(root)
        v = c.get_model_version("t_study-double", "1")
        assert v.run_id == run.run_id and v.tags["training_data.data/t_study/ds"] == dvc_md5(root / "data/t_study/ds")
        ledger = tracking.StageRun("ledger", "build", "ledger", "smoke", {}, root=root)
        ledger.alias_models("ledger")
        ledger.finish()
        assert list(mlflow.pyfunc.load_model("models:/t_study-double@ledger").predict(np.array([3.0]))) == [6.0]
        assert any((tmp_path / "served").rglob("MLmodel"))
        exp = c.get_experiment_by_name("t_study")
        assert exp.tags["mlflow.experimentKind"] == "custom_model_development"
    finally:
        stop_trees([psutil.Process(server.pid)])


def test_global_tracking_uri_puts_the_environment_back(monkeypatch, tmp_path):
    """Registration points MLflow's global URI at the client's store for one call; afterwards the
    process's MLFLOW_TRACKING_URI is what it was (MLflow's own helper deletes it), and so is the
    global."""
    import mlflow

    from stages.common.runtime.registry import global_tracking_uri

    env_uri = f"sqlite:///{(tmp_path / 'env.db').as_posix()}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", env_uri)
    with global_tracking_uri(f"sqlite:///{(tmp_path / 'other.db').as_posix()}"):
        assert mlflow.get_tracking_uri().endswith("other.db")
    assert os.environ["MLFLOW_TRACKING_URI"] == env_uri
    assert mlflow.get_tracking_uri() == env_uri
