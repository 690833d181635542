"""The local stack for real: a Prefect server, a worker and an MLflow server on 127.0.0.1,
the deployments with their cron schedule, a triggered deployment run on the smoke profile,
and `stack down` leaving no process behind."""
from __future__ import annotations

import json
import sys
import time

import psutil
import pytest

from flows.stack import Stack, free_port, mlflow_auth_available, port_free, prefect_auth_string

from .conftest import sh

pytestmark = pytest.mark.machinery

FAST_POLLING = {                                   # so the test does not wait for minutes
    "PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS": "2",
    "PREFECT_WORKER_QUERY_SECONDS": "2",
    "PREFECT_WORKER_PREFETCH_SECONDS": "2",
    "CLAIMBENCH_GPU_SLOTS": "1",                   # as on a node with one GPU
}


def _prefect(api_url: str, stack: Stack):
    """A Prefect client of ``stack``'s server (with its secret)."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_AUTH_STRING, PREFECT_API_URL, temporary_settings

    class _Ctx:
        def __enter__(self):
            self._t = temporary_settings(updates={PREFECT_API_URL: api_url,
                                                  PREFECT_API_AUTH_STRING: prefect_auth_string(stack.secret())})
            self._t.__enter__()
            self._c = get_client(sync_client=True)
            return self._c.__enter__()

        def __exit__(self, *exc):
            self._c.__exit__(*exc)
            self._t.__exit__(*exc)

    return _Ctx()


def test_stack_deployment_schedule_trigger_and_down(mini_copy, tmp_path, monkeypatch):
    repo_copy = mini_copy
    stack = Stack(repo_copy, tmp_path / "services")
    ports = (free_port(), free_port())
    # MLflow's basic auth needs Flask-WTF (mlflow[auth]); without it the stack runs only unauthenticated
    state = stack.up(prefect_port=ports[0], mlflow_port=ports[1], extra_env=FAST_POLLING,
                     mlflow_auth=mlflow_auth_available())
    pids: list[int] = []
    try:
        pids = [p.pid for info in state["processes"].values()
                for p in [psutil.Process(info["pid"])] + psutil.Process(info["pid"]).children(recursive=True)]
        assert set(state["processes"]) == {"prefect-server", "mlflow-server", "worker-claimbench"}
        ml = psutil.Process(state["processes"]["mlflow-server"]["pid"])
        assert len([ml, *ml.children(recursive=True)]) <= 3, "MLflow's job runner should be off"
        assert state["prefect_api_url"] == f"http://127.0.0.1:{ports[0]}/api"
        assert set(state["deployments"]) == {"claimbench-pipeline/nightly", "claimbench-pipeline/paper-gpu"}
        # everything listens on loopback only
        for info in state["processes"].values():
            for p in [psutil.Process(info["pid"]), *psutil.Process(info["pid"]).children(recursive=True)]:
                for conn in p.net_connections(kind="inet"):
                    if conn.status == psutil.CONN_LISTEN:
                        assert conn.laddr.ip == "127.0.0.1", (p.cmdline(), conn)

        # the cron schedule makes scheduled runs on the real server (the ephemeral one never does)
        with _prefect(state["prefect_api_url"], stack) as pc:
            dep = pc.read_deployment_by_name("claimbench-pipeline/nightly")
            assert [s.schedule.cron for s in dep.schedules] == ["0 3 * * *"]
            assert dep.work_pool_name == "claimbench" and dep.global_concurrency_limit.limit == 1
            gpu = pc.read_deployment_by_name("claimbench-pipeline/paper-gpu")
            assert gpu.work_pool_name == "claimbench-gpu" and gpu.parameters["profile"] == "paper"
            assert [s.active for s in gpu.schedules] == [False]
            from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

            deadline, scheduled = time.monotonic() + 90, []
            while time.monotonic() < deadline and not scheduled:
                runs = pc.read_flow_runs(deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[dep.id])))
                scheduled = [r for r in runs if r.auto_scheduled and r.state.is_scheduled()]
                time.sleep(1)
            assert scheduled, "the scheduler created no run from the cron schedule"
            assert all(r.expected_start_time.hour == 3 and r.expected_start_time.minute == 0
                       for r in scheduled)

        # trigger a run now (what a user does with `claimbench stack run`), wait for it
        proc = sh([sys.executable, "-m", "flows.stack", "--state-dir", str(tmp_path / "services"),
                   "run", "--profile", "smoke"], repo_copy, check=False, timeout=900)
        assert proc.returncode == 0, proc.stdout + proc.stderr + \
            (tmp_path / "services/logs/worker-claimbench.log").read_text()[-4000:]
        result = json.loads(proc.stdout[proc.stdout.index("{"):])
        assert result["state"] == "COMPLETED"

        # the GPU-marked stage ran with the gpu tags, under this host's GPU concurrency limit
        import socket

        from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

        host_tag = f"gpu@{socket.gethostname()}"
        with _prefect(state["prefect_api_url"], stack) as pc:
            assert pc.read_concurrency_limit_by_tag(host_tag).concurrency_limit == 1
            tasks = pc.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(
                any_=[result["flow_run_id"]])))
            tags = {tr.name: set(tr.tags) for tr in tasks}
            assert {"gpu", host_tag} <= tags["zipf_bigram-train"]
            assert "gpu" not in tags["zipf_bigram-prepare"]

        # DVC saw it all, and the ledger is there
        assert "up to date" in sh(["dvc", "status"], repo_copy).stdout
        rows = json.loads((repo_copy / "reports/claims.json").read_text())
        assert rows and all(r["profile"] == "smoke" for r in rows)
        assert all(r["measured"] is not None for r in rows if r["study"] == "zipf_bigram")

        # the run logged to the MLflow server: stage runs nest under the flow's run
        from mlflow.tracking import MlflowClient

        if state["mlflow_auth"]:
            monkeypatch.setenv("MLFLOW_TRACKING_USERNAME", "claimbench")
            monkeypatch.setenv("MLFLOW_TRACKING_PASSWORD", stack.secret())
        c = MlflowClient(tracking_uri=state["mlflow_url"])
        flows = c.search_runs([c.get_experiment_by_name("pipeline").experiment_id])
        assert len(flows) == 1
        flow_run = flows[0]
        assert flow_run.info.status == "FINISHED"
        assert flow_run.data.tags["prefect.flow_run_id"] == result["flow_run_id"]
        assert flow_run.data.tags["prefect.deployment"] == "nightly"
        assert any(a.path == "dvc.lock" for a in c.list_artifacts(flow_run.info.run_id))
        exp = c.get_experiment_by_name("zipf_bigram")
        runs = c.search_runs([exp.experiment_id])
        (study_parent,) = [r for r in runs if r.data.tags.get("claimbench.kind") == "flow"]
        assert study_parent.data.tags["mlflow.parentRunId"] == flow_run.info.run_id
        stage_runs = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == study_parent.info.run_id]
        assert sorted(r.info.run_name for r in stage_runs) == ["evaluate", "prepare", "train"]
        assert all(r.info.status == "FINISHED" for r in stage_runs)
        ev = [r for r in stage_runs if r.info.run_name == "evaluate"][0]
        assert c.list_artifacts(ev.info.run_id, "outs/reports/zipf_bigram")
        assert ev.info.artifact_uri.startswith((repo_copy / "mlartifacts").as_uri())  # the project's store
    finally:
        stopped = stack.down()
    # nothing left behind: every process it started (and their children) is gone, ports free
    time.sleep(0.5)
    alive = [p for p in set(pids) | set(stopped) if psutil.pid_exists(p) and
             psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert not alive, [psutil.Process(p).cmdline() for p in alive]
    assert port_free(ports[0]) and port_free(ports[1])
    assert not stack.state_path.exists()
    assert stack.secret_path.exists()                  # kept for the next `up`

    # without the server, a stage logs to the same store (sqlite) and the same experiment
    sh([sys.executable, "-m", "stages.zipf_bigram.evaluate"], repo_copy)
    from mlflow.tracking import MlflowClient

    c = MlflowClient(tracking_uri=f"sqlite:///{repo_copy / 'mlruns.db'}")
    evals = c.search_runs([c.get_experiment_by_name("zipf_bigram").experiment_id],
                          filter_string="attributes.run_name = 'evaluate'")
    assert len(evals) == 2 and all(r.info.status == "FINISHED" for r in evals)


def test_stack_refuses_a_taken_port(repo_copy, tmp_path):
    import socket

    from flows.stack import StackError

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(StackError, match=f"port {port} on 127.0.0.1 is taken"):
            Stack(repo_copy, tmp_path / "s").up(prefect_port=port, mlflow_port=free_port())


def test_ui_serves_the_project_store_on_loopback(repo_copy):
    """`claimbench ui` browses the project's sqlite store, listening on 127.0.0.1 only."""
    import subprocess
    import urllib.request

    from flows.stack import stop_trees, wait_http

    sh([sys.executable, "-m", "stages.zipf_bigram.prepare"], repo_copy)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "claimbench.cli", "ui", "--port", str(port)],
                            cwd=repo_copy, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/health", 120, proc)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/2.0/mlflow/experiments/search"
                                    "?max_results=50") as r:
            names = {e["name"] for e in json.loads(r.read())["experiments"]}
        assert "zipf_bigram" in names
        listening = []
        for p in [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]:
            try:
                listening += [c.laddr for c in p.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
            except psutil.NoSuchProcess:      # a short-lived helper process of the server's that just ended
                continue
        assert listening and all(a.ip == "127.0.0.1" for a in listening), listening
    finally:
        stop_trees([psutil.Process(proc.pid)])
