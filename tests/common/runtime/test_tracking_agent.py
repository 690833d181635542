"""The tracking agent: what a stage logs through it lands in the store as StageRun would log it
itself; one agent serves many stages; a stage that dies mid-run has its run FAILED at once; the
agent leaves when idle; a new store or new tracking code gets a new agent."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from stages.common.runtime import tracking, tracking_agent

from tests.helpers import isolate_env


def _open(root: Path, name: str = "train", **extra) -> tracking_agent.RemoteRun:
    args = dict(study="agentstudy", step=name, stage_name=f"agentstudy-{name}", profile="smoke",
                params={"common": {"seed": 0}, "agentstudy": {"train": {"lr": 0.5, "grid": [1, 2]}}},
                deps=[], outs=[], dep_hashes={"data/x": "abc"}, host="h", pid=os.getpid(),
                parent=None, threads="1")
    args.update(extra)
    return tracking_agent.RemoteRun(root, **args)


@pytest.fixture
def agent_env(monkeypatch, tmp_path):
    isolate_env(monkeypatch, tmp_path)
    monkeypatch.setenv("CLAIMBENCH_AGENT_IDLE_S", "5")
    yield tmp_path
    _stop_agent(tmp_path)


def _agent_pid(root: Path) -> int | None:
    log = tracking_agent.address_log(tracking_agent.address(root))
    pids = [int(line.split()[3]) for line in log.read_text().splitlines()
            if line.startswith("tracking agent pid") and " on " in line] if log.exists() else []
    return pids[-1] if pids else None


def _stop_agent(root: Path) -> None:
    pid = _agent_pid(root)
    if pid:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def test_logs_what_a_stage_logs_and_serves_many_stages(agent_env):
    root = agent_env
    run = _open(root)
    run.log_metrics({"a": {"b": 1.5}, "n": 3, "skip": "text"})
    import numpy as np

    run.log_curve("loss", np.array([3.0, 2.0, 1.0]), steps=np.array([0, 10, 20]))
    run.log_dict({"k": [1, 2]}, "extra/info.json")
    (root / "note.txt").write_text("hello")
    run.log_artifact(root / "note.txt", "outs")
    (root / "reports").mkdir()
    (root / "reports/m.json").write_text(json.dumps({"acc": 0.75}))
    run.finish_stage(["reports/m.json"], ["reports/m.json"], {"stage.setup_s": 0.1, "stage.compute_s": 0.2})
    run.close()
    c = tracking.client(root)
    r = c.get_run(run.run_id)
    assert r.info.status == "FINISHED" and r.info.run_name == "train"
    assert r.data.params["agentstudy.train.lr"] == "0.5" and r.data.params["agentstudy.train.grid"] == "[1, 2]"
    assert r.data.metrics["a.b"] == 1.5 and r.data.metrics["acc"] == 0.75
    assert {"stage.setup_s", "stage.compute_s", "stage.logging_s"} <= set(r.data.metrics)
    assert [(m.step, m.value) for m in c.get_metric_history(run.run_id, "loss")] == [(0, 3.0), (10, 2.0), (20, 1.0)]
    assert r.data.tags["dvc.stage"] == "agentstudy-train" and r.data.tags["dep.data/x"] == "abc"
    assert r.data.tags[tracking.PID_TAG] == str(os.getpid()) and r.data.tags[tracking.HOST_TAG] == "h"
    arts = {a.path for a in c.list_artifacts(run.run_id, "outs")}
    assert "outs/note.txt" in arts
    # a second stage finds the same agent (one process for both)
    first = _agent_pid(root)
    second = _open(root, "evaluate")
    second.finish_stage([], [], {})
    second.close()
    assert _agent_pid(root) == first
    assert c.get_run(second.run_id).info.status == "FINISHED"


KILLED = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from stages.common.runtime.tracking_agent import RemoteRun
    run = RemoteRun(Path(sys.argv[1]), study="agentstudy", step="train", stage_name="agentstudy-train",
                    profile="smoke", params={}, deps=[], outs=[], dep_hashes={}, host="h",
                    pid=os.getpid(), parent=None, threads="1")
    print(run.run_id, flush=True)
    time.sleep(600)
""")


def test_a_stage_killed_mid_run_has_its_run_failed_at_once(agent_env):
    root = agent_env
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(root)], stdout=subprocess.PIPE, text=True,
                            env=os.environ.copy())
    run_id = proc.stdout.readline().strip()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    c = tracking.client(root)
    deadline = time.monotonic() + 30
    while c.get_run(run_id).info.status == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.1)
    r = c.get_run(run_id)
    assert r.info.status == "FAILED"
    assert r.data.tags[tracking.ERROR_TAG].startswith(
        f"the stage agentstudy-train process (pid {proc.pid} on h) ended without closing its run")


def test_a_stage_that_dies_with_a_reply_unread_has_its_run_failed(agent_env):
    """A stage killed after its request and before it read the reply resets the connection
    (ECONNRESET on the agent's next read): the run is FAILED all the same, not left RUNNING."""
    import socket

    root = agent_env
    run = _open(root)                      # starts the agent; a second connection does the rest
    run.close()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(tracking_agent.address(root)))
    args = dict(study="agentstudy", step="reset", stage_name="agentstudy-reset", profile="smoke", params={},
                deps=[], outs=[], dep_hashes={}, host="h", pid=12345678, parent=None, threads="1")
    sock.sendall(tracking_agent._encode({"op": "open", "args": args}))
    reply = b""
    while not reply.endswith(b"\n"):
        reply += sock.recv(65536, socket.MSG_PEEK)[len(reply):] or b""
        time.sleep(0.05)
    run_id = json.loads(reply)["result"]
    sock.sendall(tracking_agent._encode({"op": "call", "args": {"method": "set_tags", "args": [{"a": "1"}],
                                                                "kwargs": {}}}))
    time.sleep(1.0)                        # its reply arrives unread
    sock.close()                           # unread data: the kernel resets the connection
    c = tracking.client(root)
    deadline = time.monotonic() + 30
    while c.get_run(run_id).info.status == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert c.get_run(run_id).info.status == "FAILED"


def test_fail_records_the_error_even_after_finish(agent_env):
    root = agent_env
    run = _open(root)
    try:
        raise ValueError("the fit did not converge")
    except ValueError as exc:
        run.fail(exc)
    c = tracking.client(root)
    r = c.get_run(run.run_id)
    assert r.info.status == "FAILED" and r.data.tags[tracking.ERROR_TAG] == "ValueError: the fit did not converge"
    assert "Traceback" in Path(c.download_artifacts(run.run_id, "error.txt", str(root))).read_text()
    # a SIGTERM after the outs were logged still fails the run (the stage exits non-zero)
    run = _open(root)
    run.finish_stage([], [], {})
    run.fail(SystemExit("terminated by signal SIGTERM"))
    assert c.get_run(run.run_id).info.status == "FAILED"


def test_bad_requests_are_errors_the_stage_sees(agent_env):
    run = _open(agent_env)
    with pytest.raises(tracking_agent.AgentError, match="'open' without an open run|unknown request"):
        run.conn.request("open", study="x")
    with pytest.raises(tracking_agent.AgentError, match="unknown request 'call'"):
        run.conn.request("call", method="delete_experiment", args=[], kwargs={})
    with pytest.raises(tracking_agent.AgentError, match="tracking agent, call: "):
        run.log_artifact(agent_env / "does-not-exist.txt")
    run.finish_stage([], [], {})
    run.close()


def test_one_agent_per_store_and_tracking_code(agent_env, monkeypatch, tmp_path_factory):
    root = agent_env
    a = tracking_agent.address(root)
    assert a == tracking_agent.address(root)
    other = tmp_path_factory.mktemp("other")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{other / 'mlflow.db'}")
    assert tracking_agent.address(root) != a
    assert len(str(a)) < 100          # a Unix socket path has a 107-byte limit


def test_the_agent_leaves_when_idle(agent_env, monkeypatch):
    monkeypatch.setenv("CLAIMBENCH_AGENT_IDLE_S", "1")
    root = agent_env
    _stop_agent(root)
    time.sleep(0.5)
    run = _open(root)
    run.finish_stage([], [], {})
    run.close()
    import psutil

    pid = _agent_pid(root)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:        # gone, or a zombie of this test process
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the agent did not leave after 1 s idle")
    assert not tracking_agent.address(root).exists()
    assert "idle for 1 s, exiting" in tracking_agent.address_log(tracking_agent.address(root)).read_text()


# -- the socket folder on a machine with several users -------------------------------------
@pytest.fixture
def own_tmp(monkeypatch, tmp_path):
    """A temp dir of this test's own, so the socket folder is made fresh under it."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path / f"claimbench-{os.getuid()}"


def test_the_socket_folder_is_made_private(own_tmp):
    assert tracking_agent.socket_folder() == own_tmp
    assert (own_tmp.stat().st_mode & 0o777) == 0o700 and own_tmp.stat().st_uid == os.getuid()
    assert tracking_agent.socket_folder() == own_tmp          # and accepted when it is there


def test_a_socket_folder_others_may_enter_is_refused(own_tmp):
    own_tmp.mkdir(mode=0o700)
    own_tmp.chmod(0o777)
    with pytest.raises(tracking_agent.UnsafeSocketFolder, match=r"has mode 777: others may enter it.*rm -r"):
        tracking_agent.socket_folder()
    own_tmp.chmod(0o720)                                       # group-writable only
    with pytest.raises(tracking_agent.UnsafeSocketFolder, match="has mode 720"):
        tracking_agent.address(own_tmp.parent)


def test_a_link_in_place_of_the_socket_folder_is_refused(own_tmp, tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    own_tmp.symlink_to(target)
    with pytest.raises(tracking_agent.UnsafeSocketFolder, match="is not a folder"):
        tracking_agent.socket_folder()


@pytest.mark.skipif(os.getuid() != 0, reason="only root can hand a folder to another user")
def test_a_socket_folder_another_user_owns_is_refused(own_tmp):
    own_tmp.mkdir(mode=0o700)
    os.chown(own_tmp, 65534, 65534)                            # nobody
    with pytest.raises(tracking_agent.UnsafeSocketFolder, match="belongs to user id 65534"):
        tracking_agent.socket_folder()


def test_the_agent_log_is_never_written_through_a_link(agent_env, monkeypatch, own_tmp, tmp_path):
    """A link planted where the agent's log goes is not followed: connect() fails and the file the
    link points at is untouched."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    path = tracking_agent.address(agent_env)
    tracking_agent.address_log(path).symlink_to(victim)
    with pytest.raises(OSError):
        tracking_agent.connect(agent_env)
    assert victim.read_text() == "keep"


def test_a_stage_stops_with_a_clear_error_on_an_unsafe_socket_folder(agent_env, own_tmp, capsys):
    from stages.common.runtime.stage import open_run

    own_tmp.mkdir(mode=0o777)
    own_tmp.chmod(0o777)
    try:
        with pytest.raises(SystemExit) as exc:
            open_run("agentstudy", "train", "agentstudy-train", "smoke", {}, agent_env, [], [], {})
    finally:
        own_tmp.chmod(0o700)                                   # the fixture's teardown looks there
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"error: stage agentstudy-train: the tracking agent's socket folder {own_tmp} has mode 777" in err
