"""The Prefect flow on the smoke profile (ephemeral Prefect server), on the small target: a copy of
the repo whose dvc.yaml holds zipf_bigram and the ledger."""
from __future__ import annotations

import json

import pytest

from .conftest import sh

pytestmark = pytest.mark.machinery


def test_flow_runs_stale_stages_and_leaves_dvc_clean(mini_copy):
    repo_copy = mini_copy
    proc = sh([__import__("sys").executable, "-m", "flows.pipeline", "--profile", "smoke"], repo_copy,
              timeout=900)
    result = json.loads(proc.stdout[proc.stdout.index("{"):])
    from stages.common.runtime.dvcfile import load_stages

    all_stages = set(load_stages(repo_copy))
    assert set(result["ran"]) == all_stages
    assert result["failed"] == []
    # a stage's output reaches the flow's log line by line, each line named by its stage
    assert "zipf_bigram-train | [zipf_bigram-train] profile=smoke" in proc.stdout + proc.stderr
    # DVC saw everything the flow ran: nothing stale, and `dvc repro` has nothing to do
    assert "are up to date" in sh(["dvc", "status"], repo_copy).stdout
    assert "Running stage" not in sh(["dvc", "repro"], repo_copy).stdout
    rows = json.loads((repo_copy / "reports/claims.json").read_text())
    assert rows and all(r["measured"] is not None for r in rows if r["study"] == "zipf_bigram")

    # stage runs nest under the flow's run: in each study's experiment (the MLflow UI nests
    # only within one) under a run that stands for the flow and is itself its child
    from mlflow.tracking import MlflowClient

    c = MlflowClient(tracking_uri=f"sqlite:///{repo_copy / 'mlruns.db'}")
    parent = c.get_run(result["parent_run_id"])
    assert parent.info.status == "FINISHED"
    assert c.get_experiment(parent.info.experiment_id).name == "pipeline"
    stage_runs = {}
    studies = sorted({name.split("-")[0] for name in all_stages} - {"params"})   # the params check logs no run
    for study, n_stages in ((s, sum(n.split("-")[0] == s for n in all_stages)) for s in studies):
        exp_id = c.get_experiment_by_name(study).experiment_id
        (mid,) = c.search_runs([exp_id], filter_string=f"tags.mlflow.parentRunId = '{parent.info.run_id}'")
        assert mid.data.tags["claimbench.kind"] == "flow" and mid.info.status == "FINISHED"
        kids = c.search_runs([exp_id], filter_string=f"tags.mlflow.parentRunId = '{mid.info.run_id}'")
        assert len(kids) == n_stages
        stage_runs.update({r.data.tags["dvc.stage"]: r for r in kids})
    assert set(stage_runs) == set(result["ran"]) - {"params"}
    assert all(r.info.status == "FINISHED" for r in stage_runs.values())

    # a second flow run finds nothing stale
    again = sh([__import__("sys").executable, "-m", "flows.pipeline"], repo_copy, timeout=600)
    assert json.loads(again.stdout[again.stdout.index("{"):])["ran"] == []


def test_a_flow_on_another_profile_leaves_the_checkout_untouched(mini_copy):
    """`--profile default` from a smoke checkout runs in .claimbench/profiles/default/: its own
    dvc.lock, the checkout's MLflow store; the checkout's files (git status) stay as they were."""
    import subprocess
    import sys

    root = mini_copy

    def git_status() -> str:
        return subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True,
                              check=True).stdout

    assert git_status() == ""
    proc = sh([sys.executable, "-m", "flows.pipeline", "--profile", "default", "--retries", "0", "params"],
              root, timeout=600)
    result = json.loads(proc.stdout[proc.stdout.index("{"):])
    ws = root / ".claimbench/profiles/default"
    assert result["ran"] == ["params"] and result["workspace"] == str(ws)
    assert git_status() == ""
    assert "profile: smoke" in (root / "params.yaml").read_text()
    assert "profile: default" in (ws / "params.yaml").read_text()
    assert "params:" in (ws / "dvc.lock").read_text() and not (root / "dvc.lock").exists()
    assert "params" not in sh(["dvc", "status", "--json", "params"], ws).stdout.replace('"params.yaml"', "")
    assert (ws / ".dvc/config.local").read_text().count(str((root / ".dvc/cache").resolve())) == 1
    from mlflow.tracking import MlflowClient

    c = MlflowClient(tracking_uri=f"sqlite:///{root / 'mlruns.db'}")
    assert c.get_run(result["parent_run_id"]).data.tags["profile"] == "default"
    assert not (ws / "mlruns.db").exists()
    again = sh([sys.executable, "-m", "flows.pipeline", "--profile", "default", "params"], root, timeout=600)
    assert json.loads(again.stdout[again.stdout.index("{"):])["ran"] == [] and git_status() == ""
