"""Several stages logging at once lose nothing: N processes, each a stage run that logs params,
metrics one call at a time, a curve with steps and artifacts, at the same moment, against a
fresh sqlite store (each process logging itself, or all through one tracking agent that they race
to start) and against an `mlflow server`; then every run, metric point and artifact is counted."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from flows.stack import free_port, stop_trees, wait_http

from tests.helpers import isolate_env

N_PROC, N_METRICS, CURVE, N_ART = 6, 30, 200, 3

WORKER = textwrap.dedent(f"""
    import sys, time
    from pathlib import Path
    from stages.common.runtime import tracking

    i, root, start, mode = int(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    while time.time() < start:                    # all processes begin together
        time.sleep(0.005)
    params = {{"i": i, "grid": list(range(5))}}
    if mode == "agent":
        import os, socket
        from stages.common.runtime.tracking_agent import RemoteRun
        run = RemoteRun(root, study="conc", step=f"s{{i}}", stage_name=f"conc-s{{i}}", profile="smoke",
                        params=params, deps=[], outs=[], dep_hashes={{}}, host=socket.gethostname(),
                        pid=os.getpid(), parent=None, threads="1")
    else:
        run = tracking.StageRun("conc", f"s{{i}}", f"conc-s{{i}}", "smoke", params, root=root)
    for k in range({N_METRICS}):
        run.log_metrics({{f"m{{k}}": i + k / 100}})
    run.log_curve("loss", [1.0 / (s + 1) for s in range({CURVE})])
    for a in range({N_ART}):
        f = root / f"art_{{i}}_{{a}}.txt"
        f.write_text(f"{{i}} {{a}}\\n" * 100)
        run.log_artifact(f, "outs")
    run.finish_stage([], [], {{}})
    run.close()
    print(run.run_id)
""")


def _fan_out(tmp_path, env, mode: str = "inprocess") -> list[str]:
    start = time.time() + 4.0
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(i), str(tmp_path), str(start), mode],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(N_PROC)]
    ids = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        ids.append(out.strip().splitlines()[-1])
    return ids


def _count(client, ids: list[str]) -> None:
    exp = client.get_experiment_by_name("conc")
    runs = client.search_runs([exp.experiment_id], max_results=1000)
    assert sorted(r.info.run_id for r in runs) == sorted(ids)
    for r in runs:
        i = int(r.data.params["i"])
        assert r.info.status == "FINISHED"
        assert r.data.params["grid"] == "[0, 1, 2, 3, 4]"
        assert {k: v for k, v in r.data.metrics.items() if k.startswith("m")} == \
            {f"m{k}": i + k / 100 for k in range(N_METRICS)}
        hist = client.get_metric_history(r.info.run_id, "loss")
        assert sorted(m.step for m in hist) == list(range(CURVE))
        arts = sorted(a.path for a in client.list_artifacts(r.info.run_id, "outs"))
        assert arts == [f"outs/art_{i}_{a}.txt" for a in range(N_ART)]
        p = client.download_artifacts(r.info.run_id, f"outs/art_{i}_1.txt")
        assert open(p).read() == f"{i} 1\n" * 100


@pytest.mark.parametrize("mode", ["inprocess", "agent"])
def test_concurrent_stage_runs_sqlite_store(tmp_path, monkeypatch, sub_env, mode):
    """A cold sqlite store (created by the racing processes themselves, or by the one agent they
    race to start) loses nothing."""
    isolate_env(monkeypatch, tmp_path)
    env = sub_env(MLFLOW_TRACKING_URI=f"sqlite:///{tmp_path / 'mlflow.db'}",
                  CLAIMBENCH_ARTIFACT_ROOT=(tmp_path / "artifacts").as_uri(), CLAIMBENCH_AGENT_IDLE_S="5")
    ids = _fan_out(tmp_path, env, mode)
    from stages.common.runtime import tracking

    _count(tracking.client(tmp_path), ids)


@pytest.mark.machinery
def test_concurrent_stage_runs_tracking_server(tmp_path, sub_env):
    """The same against `mlflow server` (HTTP, its own sqlite store, served artifacts)."""
    port = free_port()
    env = sub_env()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "mlflow"), "server",
         "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
         "--backend-store-uri", f"sqlite:///{tmp_path / 'server.db'}",
         "--artifacts-destination", str(tmp_path / "served")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_http(f"{url}/health", 120, server)
        ids = _fan_out(tmp_path, sub_env(MLFLOW_TRACKING_URI=url))
        from mlflow.tracking import MlflowClient

        _count(MlflowClient(tracking_uri=url), ids)
        assert any((tmp_path / "served").rglob("art_0_0.txt"))   # the server stored them
    finally:
        import psutil

        stop_trees([psutil.Process(server.pid)])
