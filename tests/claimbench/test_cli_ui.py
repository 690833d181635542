"""`claimbench ui`: the MLflow UI binds 127.0.0.1 unless told otherwise, and warns on stderr when
told to listen where others can reach it (it has no login: the store is then readable and
writable by anyone who reaches it). No server is started here."""
from __future__ import annotations

import subprocess

import pytest

from claimbench import cli


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_hosts_do_not_warn(host):
    assert cli.is_loopback(host)
    assert cli.ui_host_warning(host, 5000) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "10.0.0.5", "myhost.example.org"])
def test_other_hosts_warn(host):
    assert not cli.is_loopback(host)
    text = cli.ui_host_warning(host, 5001)
    assert text.startswith("WARNING") and "5001" in text
    assert "read" in text and "write" in text and "anyone" in text and "127.0.0.1" in text


class _FakeServer:
    def __init__(self, cmd, **kw):
        self.cmd, self.env = cmd, kw.get("env", {})

    def wait(self):
        return 0

    def poll(self):
        return 0


def _run_ui(monkeypatch, tmp_path, argv, code=0, servers=None):
    servers = [] if servers is None else servers
    monkeypatch.setattr("stages.common.runtime.params.repo_root", lambda: tmp_path)
    monkeypatch.setattr(subprocess, "Popen", lambda cmd, **kw: servers.append(_FakeServer(cmd, **kw)) or servers[-1])
    with pytest.raises(SystemExit) as exc:
        cli.main(["ui", "--no-browser", *argv])
    assert exc.value.code == code
    if code:
        assert servers == []
        return None
    (server,) = servers
    return server.cmd


def test_ui_binds_loopback_by_default_without_a_warning(monkeypatch, tmp_path, capsys):
    cmd = _run_ui(monkeypatch, tmp_path, [])
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1"
    assert "WARNING" not in capsys.readouterr().err


def test_ui_on_all_interfaces_warns_on_stderr(monkeypatch, tmp_path, capsys):
    cmd = _run_ui(monkeypatch, tmp_path, ["--host", "0.0.0.0", "--port", "5050"])
    assert cmd[cmd.index("--host") + 1] == "0.0.0.0"
    out, err = capsys.readouterr()
    assert "every network interface" in err and "read the project's MLflow store AND write" in err
    assert "WARNING" not in out


def test_ui_runs_one_worker_with_mlflows_job_runner_off(monkeypatch, tmp_path):
    servers = []
    cmd = _run_ui(monkeypatch, tmp_path, [], servers=servers)
    assert cmd[cmd.index("--workers") + 1] == "1"
    assert servers[0].env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] == "false"
    assert servers[0].env["MLFLOW_DISABLE_TELEMETRY"] == "true"


def _store(root, names):
    import sqlite3

    with sqlite3.connect(root / "mlruns.db") as con:
        con.execute("CREATE TABLE experiments (experiment_id INTEGER, name TEXT, lifecycle_stage TEXT)")
        con.executemany("INSERT INTO experiments VALUES (?, ?, 'active')", list(enumerate(names)))


def test_ui_lands_on_the_studys_runs_or_the_list_never_the_genai_home(tmp_path):
    _store(tmp_path, ["Default", "zipf_bigram", "ledger"])
    base = "http://127.0.0.1:5000"
    assert cli.ui_landing(tmp_path, base, "zipf_bigram") == \
        f"{base}/#/experiments/1/runs?workflowType=machine_learning&viewStateShareKey=claims"
    assert cli.ui_landing(tmp_path, base, None) == f"{base}/#/experiments?workflowType=machine_learning"
    with pytest.raises(ValueError, match=r"no experiment 'nosuch' .*zipf_bigram, ledger|no experiment 'nosuch' .*ledger, zipf_bigram"):
        cli.ui_landing(tmp_path, base, "nosuch")


def test_ui_of_an_unknown_study_exits_2_without_a_server(monkeypatch, tmp_path, capsys):
    _store(tmp_path, ["zipf_bigram"])
    _run_ui(monkeypatch, tmp_path, ["nosuch"], code=2)
    assert "error: no experiment 'nosuch'" in capsys.readouterr().err


def test_ui_and_check_say_whether_this_checkout_holds_the_ledgers_runs(tmp_path):
    """Machine-dependent, so said at run time: none of the runs here, then all of them."""
    import json
    import sqlite3

    (tmp_path / "stages/ledger").mkdir(parents=True)
    record = {"default": {"store": {"hosts": ["vm"], "days": ["2026-12-06"]},
                          "studies": {"zipf_bigram": {"stages": {"zipf_bigram-evaluate": {"run_id": "a" * 32}}}}}}
    (tmp_path / "stages/ledger/runs.json").write_text(json.dumps(record))
    line = cli.store_line(tmp_path)
    assert line is not None and "no copy (no mlruns.db)" in line and "dvc repro" in line
    with sqlite3.connect(tmp_path / "mlruns.db") as con:
        con.execute("CREATE TABLE runs (run_uuid TEXT)")
        con.execute("INSERT INTO runs VALUES (?)", ("a" * 32,))
    assert "holds all 1 runs" in cli.store_line(tmp_path)
