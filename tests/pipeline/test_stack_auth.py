"""The stack's secret (issue 43): made once per checkout with mode 0600, refused when others may read
it; the Prefect and MLflow servers refuse a request without it (401) and accept one with it.
The unmarked tests start no server; the ``machinery`` ones start the real servers on 127.0.0.1."""
from __future__ import annotations

import base64
import configparser
import json
import os
import stat
import time
import urllib.error
import urllib.request

import pytest

from flows import stack as stack_mod
from flows.stack import (USER, Stack, StackError, client_auth_env, create_or_read_secret, export_lines,
                         free_port, mlflow_auth_available, mlflow_auth_config, mlflow_server_auth_env,
                         prefect_auth_string, prefect_server_auth_env, read_secret)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _loose_secret(path, mode=0o644):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x" * 43 + "\n")
    path.chmod(mode)
    return path


# -- the secret file ---------------------------------------------------------------------------
def test_secret_is_made_once_with_mode_0600(tmp_path):
    path = tmp_path / "services" / "secret"
    old = os.umask(0)              # even with a permissive umask
    try:
        secret, made = create_or_read_secret(path)
    finally:
        os.umask(old)
    assert made and len(secret) >= 40
    assert _mode(path) == 0o600
    assert path.read_text().strip() == secret
    again, made_again = create_or_read_secret(path)
    assert (again, made_again) == (secret, False)       # the same secret, not a new one
    assert read_secret(path) == secret
    assert create_or_read_secret(tmp_path / "other" / "secret")[0] != secret


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_secret_others_may_read_is_refused(tmp_path, mode):
    path = _loose_secret(tmp_path / "secret", mode)
    with pytest.raises(StackError, match=f"mode {mode:04o}: other users may read or change") as err:
        create_or_read_secret(path)
    assert "rm " in str(err.value) and "chmod 600" in str(err.value)
    assert _mode(path) == mode                  # left as it was, not silently fixed


def test_a_symlink_or_empty_secret_is_refused(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("y" * 43)
    target.chmod(0o600)
    link = tmp_path / "secret"
    link.symlink_to(target)
    with pytest.raises(StackError, match="not a link"):
        read_secret(link)
    empty = tmp_path / "empty"
    empty.touch(mode=0o600)
    with pytest.raises(StackError, match="no usable secret"):
        read_secret(empty)
    with pytest.raises(StackError, match="stack up` makes one"):
        read_secret(tmp_path / "missing")


def test_up_refuses_a_loose_secret_before_starting_anything(tmp_path):
    stack = Stack(tmp_path, tmp_path / "services")
    _loose_secret(stack.secret_path)
    with pytest.raises(StackError, match="mode 0644"):
        stack.up(prefect_port=free_port(), mlflow_port=None, deploy=False)
    assert not stack.state_path.exists() and not stack.logs.exists()     # nothing was started


def test_up_refuses_an_unauthenticated_mlflow_server_unless_asked(tmp_path, monkeypatch):
    monkeypatch.setattr(stack_mod, "mlflow_auth_available", lambda: False)
    stack = Stack(tmp_path, tmp_path / "services")
    with pytest.raises(StackError, match=r"needs Flask-WTF.*mlflow\[auth\].*--no-mlflow.*--mlflow-no-auth"):
        stack.up(prefect_port=free_port(), mlflow_port=free_port(), deploy=False)
    assert not stack.state_path.exists() and not stack.secret_path.exists()


# -- the environments --------------------------------------------------------------------------
def test_client_and_server_environments(tmp_path, monkeypatch):
    secret = "s" * 43
    assert prefect_auth_string(secret) == f"{USER}:{secret}"
    # what Prefect's server compares with is what `curl -u claimbench:SECRET` sends
    assert base64.b64decode(base64.b64encode(f"{USER}:{secret}".encode())).decode() == prefect_auth_string(secret)
    assert prefect_server_auth_env(secret)["PREFECT_SERVER_API_AUTH_STRING"] == f"{USER}:{secret}"
    assert client_auth_env(secret) == {"PREFECT_API_AUTH_STRING": f"{USER}:{secret}",
                                       "MLFLOW_TRACKING_USERNAME": USER, "MLFLOW_TRACKING_PASSWORD": secret}
    assert client_auth_env(secret, mlflow=False) == {"PREFECT_API_AUTH_STRING": f"{USER}:{secret}"}

    # the worker's environment (so every flow run and stage) carries the client's credentials,
    # never stale ones from the caller's shell
    monkeypatch.setenv("PREFECT_API_AUTH_STRING", "stale")
    monkeypatch.setenv("MLFLOW_TRACKING_PASSWORD", "stale")
    stack = Stack(tmp_path, tmp_path / "services")
    state = {"prefect_api_url": "http://127.0.0.1:1/api", "mlflow_url": "http://127.0.0.1:2", "mlflow_auth": True}
    env = stack.env(state, secret)
    assert env["PREFECT_API_AUTH_STRING"] == f"{USER}:{secret}"
    assert (env["MLFLOW_TRACKING_USERNAME"], env["MLFLOW_TRACKING_PASSWORD"]) == (USER, secret)
    assert env["MLFLOW_TRACKING_URI"] == "http://127.0.0.1:2"
    bare = stack.env()
    assert not {"PREFECT_API_AUTH_STRING", "MLFLOW_TRACKING_PASSWORD"} & set(bare)
    unauth = stack.env({**state, "mlflow_auth": False}, secret)
    assert "MLFLOW_TRACKING_PASSWORD" not in unauth and unauth["PREFECT_API_AUTH_STRING"] == f"{USER}:{secret}"


def test_mlflow_auth_config_holds_no_password(tmp_path):
    secret = "p" * 43
    ini = mlflow_auth_config(tmp_path)
    assert secret not in ini
    cfg = configparser.ConfigParser()
    cfg.read_string(ini)
    assert cfg["mlflow"]["admin_username"] == USER
    assert cfg["mlflow"]["database_uri"] == f"sqlite:///{(tmp_path / 'mlflow-auth.db').as_posix()}"
    assert not cfg["mlflow"].get("admin_password")
    env = mlflow_server_auth_env(secret, tmp_path)
    assert env["MLFLOW_AUTH_ADMIN_PASSWORD"] == secret and env["MLFLOW_AUTH_ADMIN_USERNAME"] == USER
    assert env["MLFLOW_AUTH_CONFIG_PATH"] == str(tmp_path / "mlflow-auth.ini")
    assert secret not in env["MLFLOW_FLASK_SERVER_SECRET_KEY"] and len(env["MLFLOW_FLASK_SERVER_SECRET_KEY"]) == 64


def test_status_names_the_secret_and_prints_it_only_with_env(tmp_path, capsys):
    from flows.stack import main

    services = tmp_path / "services"
    stack = Stack(tmp_path, services)
    secret, _ = create_or_read_secret(stack.secret_path)
    state = {"root": str(tmp_path), "prefect_api_url": "http://127.0.0.1:4200/api",
             "mlflow_url": "http://127.0.0.1:5000", "mlflow_auth": True,
             "processes": {"prefect-server": {"pid": 2 ** 22 + 7, "started": 0.0}}}
    stack.state_path.write_text(json.dumps(state))
    assert main(["--state-dir", str(services), "status"]) == 1      # its process is not running
    out = capsys.readouterr().out
    assert str(stack.secret_path) in out and "stack status --env" in out
    assert secret not in out                                    # never by default
    assert main(["--state-dir", str(services), "status", "--env"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == export_lines(state, secret)
    assert f"export PREFECT_API_AUTH_STRING={USER}:{secret}" in lines
    assert f"export MLFLOW_TRACKING_PASSWORD={secret}" in lines
    assert "export PREFECT_API_URL=http://127.0.0.1:4200/api" in lines
    stack.state_path.unlink()
    assert main(["--state-dir", str(services), "status", "--env"]) == 1
    assert secret not in capsys.readouterr().out


# -- the real servers --------------------------------------------------------------------------
def _status(url: str, auth: tuple[str, str] | None = None, data: bytes | None = None) -> int:
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    if auth is not None:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as err:
        return err.code


def _prefect_refuses_without_the_secret(state: dict, stack, secret: str) -> None:
    api = state["prefect_api_url"]
    assert _status(f"{api}/health") == 200                        # the health probe stays open
    for url, data in ((f"{api}/admin/version", None), (f"{api}/flows/filter", b"{}"),
                      (f"{api}/work_pools/filter", b"{}")):
        assert _status(url, data=data) == 401, url
        assert _status(url, (USER, "wrong-" + secret), data) == 401, url
        assert _status(url, (USER, secret), data) == 200, url
    # the worker (a client the stack started) got in with it: it registered in its pool
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_AUTH_STRING, PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: api, PREFECT_API_AUTH_STRING: prefect_auth_string(secret)}):
        with get_client(sync_client=True) as pc:
            deadline, workers = time.monotonic() + 120, []
            while time.monotonic() < deadline and not workers:
                try:
                    workers = pc.read_workers_for_work_pool("claimbench")
                except Exception:                       # the pool is made by the worker itself
                    pass
                time.sleep(1)
    assert workers, (stack.logs / "worker-claimbench.log").read_text()[-3000:]
    assert "401" not in (stack.logs / "worker-claimbench.log").read_text()


@pytest.mark.machinery
def test_both_servers_refuse_requests_without_the_secret(tmp_path, monkeypatch):
    """One stack (both servers and the worker, started once: each start costs tens of seconds):
    Prefect's API and MLflow's answer 401 without the secret or with a wrong one, 200 with it;
    the worker got in with it; a client with the worker's environment logs to MLflow."""
    assert mlflow_auth_available(), "Flask-WTF is missing: the project's install (mlflow[auth]) brings it"
    root = tmp_path / "root"
    root.mkdir()
    stack = Stack(root, tmp_path / "services")
    state = stack.up(prefect_port=free_port(), mlflow_port=free_port(), deploy=False, prefect_ui=False,
                     extra_env={"PREFECT_WORKER_QUERY_SECONDS": "2"})
    try:
        assert state["mlflow_auth"] and _mode(stack.secret_path) == 0o600
        secret = stack.secret()
        _prefect_refuses_without_the_secret(state, stack, secret)
        url = state["mlflow_url"]
        assert _status(f"{url}/health") == 200
        search = f"{url}/api/2.0/mlflow/experiments/search?max_results=10"
        create = f"{url}/api/2.0/mlflow/experiments/create"
        assert _status(search) == 401
        assert _status(search, (USER, "wrong-" + secret)) == 401
        assert _status(search, ("admin", secret)) == 401
        assert _status(create, data=b'{"name": "intruder"}') == 401
        assert _status(search, (USER, secret)) == 200
        # a client with the worker's environment logs to it
        for k, v in client_auth_env(secret).items():
            monkeypatch.setenv(k, v)
        from mlflow.tracking import MlflowClient

        c = MlflowClient(tracking_uri=url)
        eid = c.create_experiment("auth-check")
        assert c.get_experiment(eid).name == "auth-check"
        assert "intruder" not in {e.name for e in c.search_experiments()}
        assert secret not in (stack.state_dir / "mlflow-auth.ini").read_text()
    finally:
        stack.down(quiet=True)
