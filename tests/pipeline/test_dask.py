"""The distributed path: the same flow with Prefect's Dask task runner (a local cluster of
worker processes on loopback) runs the stages and leaves DVC clean."""
from __future__ import annotations

import json
import sys

import pytest

from .conftest import sh

pytestmark = pytest.mark.machinery


def test_flow_on_a_dask_cluster(mini_copy):
    repo_copy = mini_copy
    proc = sh([sys.executable, "-m", "flows.pipeline", "--task-runner", "dask", "zipf_bigram-evaluate"],
              repo_copy, timeout=900)
    result = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert result["ran"] == ["params", "zipf_bigram-prepare", "zipf_bigram-train", "zipf_bigram-evaluate"]
    assert "are up to date" in sh(["dvc", "status", "stages/zipf_bigram/dvc.yaml:zipf_bigram-evaluate"],
                                  repo_copy).stdout


def test_unknown_task_runner_is_refused(mini_copy):
    repo_copy = mini_copy
    proc = sh([sys.executable, "-m", "flows.pipeline", "--task-runner", "spark"], repo_copy, check=False)
    assert proc.returncode == 2                  # refused before Prefect's server starts
    assert "--task-runner 'spark': use threads, dask or dask://host:port" in proc.stderr
