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
    from stages.common.dvcfile import load_stages

    all_stages = set(load_stages(repo_copy))
    assert set(result["ran"]) == all_stages
    assert result["failed"] == []
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
