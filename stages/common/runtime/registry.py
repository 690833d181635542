"""MLflow registered models, and what the MLflow UI shows first.

**Registered models.** Every model a stage logs (``StageRun.log_model``) becomes a new version of
the registered model ``<study>-<name>`` (``autoopt-m1``, ``fgbench-text``). Each version is tagged
with what made it:

* ``mlflow.source.git.commit``, ``git.dirty``, ``profile``, ``dvc.stage``, ``params.hash`` (as on the run);
* ``training_data.<path>``: the md5 DVC records in dvc.lock for each data dep of the stage (its
  deps outside ``stages/``; code is not data). The stage runs before DVC writes dvc.lock; the run
  already hashed every dep the way DVC does (its ``dep.<path>`` tags, :func:`.io.dvc_md5`, tested
  against DVC's own hashing), and the version takes those;
* ``metrics_file.<path>``, set when the stage finishes: the md5 of each metrics file it wrote.

**The ``ledger`` alias** marks, in each registered model, the version the current ledger used.
The ledger reads the studies' metrics files (its deps, ``reports/<study>/``), among them the
metrics file of every training stage; :func:`set_ledger_alias` gives the alias to the newest
version whose ``metrics_file.*`` hashes equal the files now in the workspace, i.e. the version
made by the run that wrote what the ledger read. Where none matches (that run logged to another
store, or ran with tracking off) the alias is removed rather than left on a stale version. The
alias is a side effect on the MLflow store, like logging: the ledger's outputs do not depend on it.
Load a model with ``mlflow.pyfunc.load_model("models:/autoopt-m1@ledger")``.

**The MLflow UI.** MLflow 3.17 opens an experiment on its GenAI "Overview" of traces. Which
page it opens on is decided in the browser: its UI (3.17.2, workflow-based navigation compiled
on) takes the sidebar's "GenAI / Model training" switch (the URL's ``workflowType``, else the
browser's localStorage ``mlflow.workflowType``, default ``genai``) over the experiment's type,
the tag ``mlflow.experimentKind``. So each experiment is tagged ``custom_model_development``
("Machine learning", what the UI's own type picker writes, and what it goes by where the switch
is off), and the links we print (:func:`runs_url`) carry ``workflowType=machine_learning`` and
the runs tab. Which run columns show is kept in the browser too (localStorage, per experiment);
the one server-side view state is a *saved view*, an experiment tag ``mlflow.sharedViewState.<id>``
listed in the runs page's "Saved views" menu and opened by ``?viewStateShareKey=<id>``.
:func:`experiment_tags` gives each experiment a saved view ``claims`` whose columns are the
profile, the DVC stage, the stage's compute time, the registered models and the study's claim
metrics (from its claims.yaml).

This module is runtime (:mod:`stages.common.runtime`, never a DVC dep): it shapes no
stage output. The tracking helper (:mod:`.tracking`) calls it; stages never do.
"""
from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

ALIAS = "ledger"
KIND_TAG, ML_KIND = "mlflow.experimentKind", "custom_model_development"
VIEW_PREFIX, VIEW_ID, VIEW_NAME = "mlflow.sharedViewState.", "claims", "claims"
DATA_TAG, METRICS_TAG = "training_data.", "metrics_file."
RUN_TAGS = ("mlflow.source.git.commit", "git.dirty", "profile", "dvc.stage", "params.hash")


def registered_name(study: str, name: str) -> str:
    return f"{study}-{name}"


def data_deps(deps: Iterable[str]) -> list[str]:
    """The deps that are data: everything outside ``stages/`` (the code)."""
    return sorted(d for d in deps if not d.startswith("stages/"))


def version_tags(run_tags: dict[str, str], deps: Iterable[str]) -> dict[str, str]:
    """A new version's tags: the run's provenance tags and the DVC hash of each data dep (from the
    run's ``dep.<path>`` tags: the run hashed its deps when it opened, and data deps are inputs)."""
    tags = {k: run_tags[k] for k in RUN_TAGS if k in run_tags}
    for d in data_deps(deps):
        if f"dep.{d}" in run_tags:
            tags[DATA_TAG + d] = run_tags[f"dep.{d}"]
    return tags


def register(c, name: str, model_id: str, run_id: str, tags: dict[str, str],
             description: str = "") -> str:
    """Add the logged model ``model_id`` as a new version of registered model ``name`` (created
    on first use); returns the version number."""
    from mlflow.exceptions import MlflowException

    from stages.common.runtime.mlflow_client import retry

    def create_model() -> None:
        try:
            c.create_registered_model(name, tags={"claimbench.study": name.split("-")[0]},
                                      description=description or None)
        except MlflowException as exc:
            if "already exists" not in str(exc).lower() and exc.error_code not in (
                    "RESOURCE_ALREADY_EXISTS", "ALREADY_EXISTS"):
                raise

    retry(create_model)
    # A sqlite/file registry looks the logged model up through MLflow's *global* tracking URI,
    # not the client's (a TODO in mlflow/store/model_registry/sqlalchemy_store.py), so point it
    # at this client's store for the call.
    with global_tracking_uri(c.tracking_uri):
        mv = retry(lambda: c.create_model_version(name, source=f"models:/{model_id}", run_id=run_id,
                                                  tags=tags, model_id=model_id))
    return str(mv.version)


@contextmanager
def global_tracking_uri(uri: str) -> Iterator[None]:
    """MLflow's global tracking URI set to ``uri`` for a block, then put back as it was, and the
    ``MLFLOW_TRACKING_URI`` environment variable with it. (MLflow's own ``_use_tracking_uri``
    restores the global but, when that was unset, also deletes the environment variable: a
    process configured by it, such as a tracking agent logging to a server, would lose it.)"""
    import mlflow
    from mlflow.tracking._tracking_service import utils

    old_global, old_env = utils._tracking_uri, os.environ.get("MLFLOW_TRACKING_URI")
    mlflow.set_tracking_uri(uri)
    try:
        yield
    finally:
        mlflow.set_tracking_uri(old_global)
        if old_env is None:
            os.environ.pop("MLFLOW_TRACKING_URI", None)
        else:
            os.environ["MLFLOW_TRACKING_URI"] = old_env


def record_metrics_files(c, versions: list[tuple[str, str]], root: Path,
                         metrics: Iterable[str]) -> None:
    """Tag each (name, version) a stage registered with the md5 of the metrics files it wrote."""
    from stages.common.io import dvc_md5
    from stages.common.runtime.mlflow_client import retry

    hashes = {m: dvc_md5(root / m) for m in metrics if (root / m).is_file()}
    for name, version in versions:
        for m, md5 in hashes.items():
            retry(lambda: c.set_model_version_tag(name, version, METRICS_TAG + m, md5))


def _all(search) -> list:
    out, token = [], None
    while True:
        page = search(token)
        out += list(page)
        token = page.token
        if not token:
            return out


def set_ledger_alias(c, root: Path, alias: str = ALIAS) -> list[str]:
    """Point ``alias`` of every registered model at the newest version whose metrics files are
    the ones now in ``root`` (see the module docstring); remove it where no version is. Returns
    one line per registered model saying what was done."""
    from stages.common.io import dvc_md5
    from stages.common.runtime.mlflow_client import retry

    models = retry(lambda: _all(lambda t: c.search_registered_models(page_token=t, max_results=100)))
    current: dict[str, str | None] = {}

    def now(path: str) -> str | None:
        if path not in current:
            current[path] = dvc_md5(root / path) if (root / path).is_file() else None
        return current[path]

    lines = []
    for m in sorted(models, key=lambda m: m.name):
        versions = retry(lambda: _all(lambda t: c.search_model_versions(
            f"name = '{m.name}'", page_token=t, max_results=1000)))
        used = [v for v in versions
                if any(k.startswith(METRICS_TAG) for k in v.tags)
                and all(now(k[len(METRICS_TAG):]) == h for k, h in v.tags.items() if k.startswith(METRICS_TAG))]
        if used:
            best = max(used, key=lambda v: int(v.version))
            retry(lambda: c.set_registered_model_alias(m.name, alias, str(best.version)))
            lines.append(f"{m.name}@{alias} = version {best.version} (run {best.run_id})")
        elif alias in (m.aliases or {}):
            retry(lambda: c.delete_registered_model_alias(m.name, alias))
            lines.append(f"{m.name}@{alias} removed: no version made the metrics the ledger read")
        else:
            lines.append(f"{m.name}: no version made the metrics the ledger read (no {alias} alias)")
    return lines


# -- the MLflow UI ---------------------------------------------------------------------------
def _column(kind: str, key: str) -> str:
    """A runs-table column id as the MLflow UI writes it (``metrics.`loss```)."""
    return f"{kind}.`{key}`"


def claim_metrics(root: Path, study: str) -> list[str]:
    """The metric keys the study's claims read, in claims.yaml order (none for a non-study)."""
    import yaml

    path = root / "stages" / study / "claims.yaml"
    if not path.is_file():
        return []
    try:
        claims = (yaml.safe_load(path.read_text()) or {}).get("claims") or []
    except yaml.YAMLError:
        return []                 # `claimbench validate` names a broken claims.yaml
    return list(dict.fromkeys(str(c["metric"]) for c in claims if isinstance(c, dict) and c.get("metric")))


def view_state(root: Path, study: str) -> dict[str, Any]:
    """The saved view's state: the runs-table columns (MLflow's ExperimentPageUIState fields)."""
    columns = [_column("tags", "profile"), _column("tags", "dvc.stage"),
               _column("metrics", "stage.compute_s"), _column("attributes", "Models"),
               *(_column("metrics", k) for k in claim_metrics(root, study))]
    return {"selectedColumns": columns}


def experiment_tags(root: Path, study: str) -> dict[str, str]:
    """The tags an experiment gets: its kind (opens on runs) and the ``claims`` saved view."""
    envelope = {"name": VIEW_NAME, "createdAt": int(time.time() * 1000),
                "state": json.dumps(view_state(root, study), sort_keys=True)}
    return {KIND_TAG: ML_KIND, VIEW_PREFIX + VIEW_ID: json.dumps(envelope)}


def tags_to_update(current: dict[str, str], wanted: dict[str, str]) -> dict[str, str]:
    """The wanted tags an existing experiment lacks; a saved view counts as present when its
    name and state match (its ``createdAt`` is when it was written)."""
    def same(key: str) -> bool:
        if key not in current:
            return False
        if not key.startswith(VIEW_PREFIX):
            return current[key] == wanted[key]
        try:
            have, want = json.loads(current[key]), json.loads(wanted[key])
        except ValueError:
            return False
        return isinstance(have, dict) and (have.get("name"), have.get("state")) == (want["name"], want["state"])

    return {k: v for k, v in wanted.items() if not same(k)}


def runs_url(base: str, experiment_id: str, view: bool = True) -> str:
    """The link that opens an experiment on its runs, in the UI's "Model training" mode, with the
    ``claims`` saved view (``view=False``: the columns the browser last kept)."""
    return (f"{base.rstrip('/')}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"
            + (f"&viewStateShareKey={VIEW_ID}" if view else ""))
