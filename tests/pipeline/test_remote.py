"""Past one machine: two clones of the repository stand for two machines sharing one DVC remote.
The CPU clone (the session's smoke build) pushes; the "GPU node" clone pulls, runs one GPU-marked
stage forced through a worker of the GPU pool (on the CPU here) and pushes; the CPU clone pulls
and finds nothing stale. A fresh clone gets the ledger by `dvc pull` alone."""
from __future__ import annotations

import json
import sys

import pytest

from flows.stack import Stack, free_port

from .conftest import sh, stale
from .test_stack import FAST_POLLING, _prefect

pytestmark = pytest.mark.pipeline

GPU_STAGE = "zipf_bigram-train"


def _commit_all(root, message: str) -> None:
    sh(["git", "add", "-A"], root)
    sh(["git", "-c", "user.email=t@localhost", "-c", "user.name=t", "commit", "-qm", message], root)


def test_remote_add_is_checked(repo_copy, tmp_path):
    run = [sys.executable, "-m", "claimbench.cli", "remote"]
    assert "no default remote" in sh(run, repo_copy).stdout
    bad = sh([*run, "add", "ftp://example.org/x"], repo_copy, check=False)
    assert bad.returncode == 2 and "scheme 'ftp' is not supported" in bad.stderr
    afile = tmp_path / "a-file"
    afile.write_text("x")
    assert "is not a directory" in sh([*run, "add", str(afile)], repo_copy, check=False).stderr
    out = sh([*run, "add", str(tmp_path / "store"), "--local"], repo_copy).stdout
    assert "default remote storage" in out and (tmp_path / "store").is_dir()
    assert ".dvc/config.local" in out and "storage" in sh(run, repo_copy).stdout


def test_two_clones_share_one_remote_and_the_gpu_node_runs_only_its_stage(built_copy, tmp_path):
    cpu = built_copy
    store = tmp_path / "remote"
    sh([sys.executable, "-m", "claimbench.cli", "remote", "add", str(store)], cpu)
    _commit_all(cpu, "the smoke run's lock files and metrics; the remote")
    sh(["dvc", "push"], cpu)

    # a fresh clone with the remote gets the ledger by `dvc pull`; `dvc repro` is then a no-op
    fresh = tmp_path / "fresh"
    sh(["git", "clone", "-q", str(cpu), str(fresh)], tmp_path)
    assert (fresh / "reports/index.html").read_bytes() == (cpu / "reports/index.html").read_bytes()  # git
    assert stale(fresh)                                # the data outputs are not in git
    sh(["dvc", "pull"], fresh)
    assert stale(fresh) == set()
    assert "Running stage" not in sh(["dvc", "repro"], fresh).stdout

    # the GPU node: a clone with no data; one run of the GPU deployment, forced on one stage
    gpu = tmp_path / "gpu-node"
    sh(["git", "clone", "-q", str(cpu), str(gpu)], tmp_path)
    assert GPU_STAGE in stale(gpu)
    stack = Stack(gpu, tmp_path / "services")
    state = stack.up(prefect_port=free_port(), mlflow_port=None, gpu_worker=True, prefect_ui=False,
                     extra_env=FAST_POLLING)
    try:
        res = stack.trigger("paper-gpu", {"profile": "smoke", "targets": [GPU_STAGE], "gpu_only": False,
                                          "force": True}, wait=True, timeout=900)
        assert res["state"] == "COMPLETED", res
        from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

        with _prefect(state["prefect_api_url"], stack) as pc:
            flow_run = pc.read_flow_run(res["flow_run_id"])
            tasks = pc.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run.id])))
        assert [t.name for t in tasks] == [GPU_STAGE]                  # the one stage it was given
        worker_log = (tmp_path / "services/logs/worker-claimbench-gpu.log").read_text()
        assert "pulled from remote storage" in worker_log and "pushed 1 stage(s)" in worker_log
    finally:
        stack.down()
    # its upstream came from the remote, byte for byte, not from a run of its own
    up = cpu / "data/zipf_bigram"
    for p in sorted(up.rglob("*")):
        if p.is_file():
            assert (gpu / p.relative_to(cpu)).read_bytes() == p.read_bytes(), p
    lines = sh(["git", "status", "--porcelain"], gpu).stdout.splitlines()
    assert all(line.endswith(("dvc.lock", "params.yaml")) for line in lines), lines
    if lines:
        _commit_all(gpu, f"{GPU_STAGE} on the GPU node")

    # the CPU clone pulls the lock files (git) and the outputs (DVC): nothing is stale
    sh(["git", "pull", "-q", "--no-rebase", str(gpu), "HEAD"], cpu)
    sh(["dvc", "pull"], cpu)
    assert stale(cpu) == set()
    assert "Running stage" not in sh(["dvc", "repro"], cpu).stdout
    summary = json.loads((cpu / "reports/claims.json").read_text())
    assert summary and all(r["profile"] == "smoke" for r in summary)
