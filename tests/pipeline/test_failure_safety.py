"""Failure safety: retries and the failing stage named by the flow; a stage killed with
SIGKILL leaves no partial outputs and only it is redone; a hand-edited or truncated input
is caught; a failed stage's MLflow run is FAILED with the error."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from .conftest import sh, stage_names, stale


def touched_stages(dvc_output: str) -> list[str]:
    """Stages `dvc repro` ran, or restored from its run cache (same cmd, deps and params ran before)."""
    return stage_names(dvc_output, cached=True)

pytestmark = pytest.mark.machinery
TRAIN = "stages/zipf_bigram/dvc.yaml:zipf_bigram-train"     # how DVC addresses a stage of a study's dvc.yaml

TOY = textwrap.dedent("""\
    # a toy stage for the failure tests: counts its attempts, then behaves as told
    import os, pathlib, signal, sys

    name, mode, out = sys.argv[1:4]
    log = pathlib.Path("attempts") / name
    log.parent.mkdir(exist_ok=True)
    n = len(log.read_text()) if log.exists() else 0
    log.write_text("x" * (n + 1))
    if mode == "kill-once" and n == 0:
        os.kill(os.getpid(), signal.SIGKILL)        # a transient death (OOM killer, preemption)
    if mode == "fail":
        sys.exit("something broke")                 # exit status 1
    if mode == "bad-input":
        print("error: bad input", file=sys.stderr)
        sys.exit(2)                                 # the stages' "bad params / inputs" status
    pathlib.Path(out).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(out).write_text(name)
""")

TOY_STAGES = textwrap.indent(textwrap.dedent("""
toy-flaky:
  cmd: python toy.py toy-flaky kill-once data/toy/flaky.txt
  deps: [toy.py]
  outs: [data/toy/flaky.txt]
toy-broken:
  cmd: python toy.py toy-broken fail data/toy/broken.txt
  deps: [toy.py]
  outs: [data/toy/broken.txt]
toy-after:
  cmd: python toy.py toy-after ok data/toy/after.txt
  deps: [data/toy/broken.txt]
  outs: [data/toy/after.txt]
toy-badinput:
  cmd: python toy.py toy-badinput bad-input data/toy/bad.txt
  deps: [toy.py]
  outs: [data/toy/bad.txt]
"""), "  ")


def attempts(root: Path, name: str) -> int:
    p = root / "attempts" / name
    return len(p.read_text()) if p.exists() else 0


def mlflow_client(root: Path):
    """A client of the copy's store, made the way stages make theirs (under the file lock that
    keeps two processes from creating the sqlite schema at once, retried while it is locked)."""
    from stages.common.runtime import tracking

    assert "MLFLOW_TRACKING_URI" not in os.environ     # so the store is the copy's mlruns.db
    return tracking.client(root)


def test_flow_retries_transient_failures_and_names_the_failing_stage(mini_copy):
    repo_copy = mini_copy
    (repo_copy / "toy.py").write_text(TOY)
    with open(repo_copy / "dvc.yaml", "a") as fh:
        fh.write(TOY_STAGES)
    toys = ["toy-flaky", "toy-broken", "toy-after", "toy-badinput"]
    proc = sh([sys.executable, "-m", "flows.pipeline", "--retries", "2", "--retry-delay", "0", *toys],
              repo_copy, check=False, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    err = proc.stderr
    # the flow's result names what failed, why, and what was not run because of it
    assert "stage toy-broken failed (exit status 1): something broke" in err
    assert "stage toy-badinput failed (exit status 2): error: bad input" in err
    assert "Not run (an upstream stage failed): toy-after" in err
    assert "toy-flaky" not in err.split("pipeline failed:")[-1]
    # killed once, retried, then fine; a bad input is not retried; a failure is retried twice
    assert attempts(repo_copy, "toy-flaky") == 2
    assert attempts(repo_copy, "toy-broken") == 3
    assert attempts(repo_copy, "toy-badinput") == 1
    assert attempts(repo_copy, "toy-after") == 0
    # what succeeded is recorded by DVC; what failed is still stale
    changed = stale(repo_copy, *toys)
    assert "toy-flaky" not in changed and {"toy-broken", "toy-badinput"} <= changed
    # the flow's MLflow run is FAILED and says why
    c = mlflow_client(repo_copy)
    (flow_run,) = c.search_runs([c.get_experiment_by_name("pipeline").experiment_id])
    assert flow_run.info.status == "FAILED"
    assert "toy-broken" in flow_run.data.tags["claimbench.error"]
    assert "toy-badinput" in flow_run.data.tags["claimbench.error"]


def _stage_process(parent: psutil.Process, module: str, timeout: float = 120) -> psutil.Process:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in parent.children(recursive=True):
            try:
                argv = p.cmdline()
            except psutil.NoSuchProcess:
                continue
            # the Python process itself, not a shell that DVC may run it through
            if "-m" in argv and argv[argv.index("-m") + 1:argv.index("-m") + 2] == [module]:
                return p
        time.sleep(0.05)
    raise AssertionError(f"no process running {module}")


def _leftovers(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for base in ("data", "reports")
                  for p in (root / base).rglob(".tmp-*")) + \
        sorted(str(p.relative_to(root)) for base in ("data", "reports") for p in (root / base).rglob(".old-*"))


def _out_state(path: Path):
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns


def _freeze_once_running(root: Path, proc: psutil.Process, stage: str):
    """Return `stage`'s MLflow run as soon as it is RUNNING, with the stage process frozen (SIGSTOP).

    The stage only runs in short slices between looks, so however slow this machine is, a
    signal sent next lands mid-stage, not after the stage finished its work (a fixed sleep
    did, on a slow CI machine). Frozen in the middle of a write, the stage holds the sqlite
    lock and the look fails with "database is locked": then it runs on and we look again.
    The caller sends its signal, then SIGCONT."""
    c = mlflow_client(root)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        proc.send_signal(signal.SIGSTOP)
        try:
            exp = c.get_experiment_by_name(stage.split("-")[0])
            runs = [] if exp is None else c.search_runs(
                [exp.experiment_id],
                filter_string=f"tags.`dvc.stage` = '{stage}' and attributes.status = 'RUNNING'")
        except Exception as exc:  # noqa: BLE001 - only the frozen writer's lock is expected
            if "database is locked" not in str(exc):
                raise
            runs = []
        if runs:
            return runs[0]
        proc.send_signal(signal.SIGCONT)
        time.sleep(0.05)
    proc.send_signal(signal.SIGCONT)
    raise AssertionError(f"{stage} never opened its MLflow run")


def _wait_for_pending(proc: psutil.Process, sig: signal.Signals, timeout: float = 60) -> None:
    """Wait until `sig` is pending on (stopped) `proc`, read from /proc/<pid>/status: whatever
    sent it, however slow the sender, it lands where `proc` was frozen."""
    bit = 1 << (sig - 1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fields = dict(line.split(":", 1) for line in
                      Path(f"/proc/{proc.pid}/status").read_text().splitlines() if ":" in line)
        if (int(fields["ShdPnd"], 16) | int(fields["SigPnd"], 16)) & bit:
            return
        time.sleep(0.05)
    raise AssertionError(f"{sig.name} never reached process {proc.pid}")


def _kill_mid_stage(root: Path, dvc: subprocess.Popen, stage: str, module: str, out: Path):
    """SIGKILL `stage` (run by `dvc`) after it opened its MLflow run and before it wrote `out`."""
    before = _out_state(out)
    proc = _stage_process(psutil.Process(dvc.pid), module)
    run = _freeze_once_running(root, proc, stage)
    now = _out_state(out)
    assert now is None or now == before, f"{stage} wrote {out} before it could be killed"
    proc.send_signal(signal.SIGKILL)
    return run


@pytest.mark.pipeline
def test_sigkill_mid_stage_leaves_no_partial_outputs_and_only_it_reruns(built_copy):
    repo_copy = built_copy
    assert touched_stages(sh(["dvc", "repro"], repo_copy).stdout) == []
    results = repo_copy / "data/zipf_bigram/results.json"
    before = results.read_bytes()
    ledger_before = (repo_copy / "reports/claims.json").read_text()

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    dvc = subprocess.Popen(["dvc", "repro", "--force", "--single-item", TRAIN],
                           cwd=repo_copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    killed_run = _kill_mid_stage(repo_copy, dvc, "zipf_bigram-train", "stages.zipf_bigram.train", results)
    out = dvc.communicate(timeout=120)[0].decode()
    assert dvc.returncode != 0, out

    # no partial output: the out is either gone (DVC removes outs before it runs a stage)
    # or byte-identical to the last complete one
    assert not results.exists() or results.read_bytes() == before
    assert "zipf_bigram-train" in sh(["dvc", "status"], repo_copy).stdout

    # the next run redoes only the killed stage: DVC restores its outs from the run cache
    # (this stage, these deps and params ran before) or, without the run cache, re-runs it;
    # its result is identical, so nothing downstream runs
    again = sh(["dvc", "repro"], repo_copy).stdout
    assert touched_stages(again) == ["zipf_bigram-train"], again
    assert results.read_bytes() == before
    assert (repo_copy / "reports/claims.json").read_text() == ledger_before
    assert "up to date" in sh(["dvc", "status"], repo_copy).stdout

    # killed again, then the Prefect flow (which runs stale stages' commands, no run cache):
    # only it runs, and it cleans up after the killed run
    dvc = subprocess.Popen(["dvc", "repro", "--force", "--single-item", TRAIN],
                           cwd=repo_copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    _kill_mid_stage(repo_copy, dvc, "zipf_bigram-train", "stages.zipf_bigram.train", results)
    dvc.communicate(timeout=120)
    flow = sh([sys.executable, "-m", "flows.pipeline"], repo_copy, timeout=600)
    assert json.loads(flow.stdout[flow.stdout.index("{"):])["ran"] == ["zipf_bigram-train"]
    assert results.read_bytes() == before
    assert _leftovers(repo_copy) == []
    assert "up to date" in sh(["dvc", "status"], repo_copy).stdout

    # the killed stages' MLflow runs were closed as FAILED, with the reason, when a stage of
    # the study next started
    c = mlflow_client(repo_copy)
    r = c.get_run(killed_run.info.run_id)
    assert r.info.status == "FAILED"
    assert "stage zipf_bigram-train process" in r.data.tags["claimbench.error"]
    assert "ended without closing its run" in r.data.tags["claimbench.error"]
    exp = c.get_experiment_by_name("zipf_bigram").experiment_id
    assert not c.search_runs([exp], filter_string="attributes.status = 'RUNNING'")


def test_sigterm_marks_the_run_failed_with_the_signal(mini_copy):
    repo_copy = mini_copy
    proc = subprocess.Popen([sys.executable, "-m", "stages.zipf_bigram.prepare"], cwd=repo_copy,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run = _freeze_once_running(repo_copy, psutil.Process(proc.pid), "zipf_bigram-prepare")
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGCONT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0
    assert "terminated by signal SIGTERM" in err.decode()
    r = mlflow_client(repo_copy).get_run(run.info.run_id)
    assert r.info.status == "FAILED"
    assert r.data.tags["claimbench.error"] == "terminated by signal SIGTERM"


@pytest.mark.pipeline
def test_hand_edited_or_truncated_input_is_caught(built_copy):
    repo_copy = built_copy
    assert touched_stages(sh(["dvc", "repro"], repo_copy).stdout) == []
    results = repo_copy / "data/zipf_bigram/results.json"
    good = results.read_bytes()
    metrics = repo_copy / "reports/zipf_bigram/metrics.json"
    metrics_before = metrics.read_bytes()
    ledger_before = (repo_copy / "reports/claims.json").read_text()

    # truncated by hand: the stage that reads it refuses, naming the file and its maker
    results.write_bytes(good[: len(good) // 2])
    proc = sh([sys.executable, "-m", "claimbench.cli", "run", "zipf_bigram", "evaluate"], repo_copy,
              check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "data/zipf_bigram/results.json differs from what stage zipf_bigram-train recorded in dvc.lock" \
        in proc.stderr
    assert "dvc checkout data/zipf_bigram/results.json" in proc.stderr
    assert metrics.read_bytes() == metrics_before          # nothing computed from the bad input
    # DVC sees it too, and `dvc repro` restores what the stage that made it made (from its run
    # cache, or by running it); the ledger comes out the same
    assert "zipf_bigram-train" in sh(["dvc", "status"], repo_copy).stdout
    out = sh(["dvc", "repro"], repo_copy).stdout
    assert touched_stages(out) == ["zipf_bigram-train"], out
    assert results.read_bytes() == good
    assert (repo_copy / "reports/claims.json").read_text() == ledger_before

    # a value edited inside a dataset folder: caught the same way
    arrow = sorted((repo_copy / "data/zipf_bigram/stats").glob("*.arrow"))[0]
    blob = bytearray(arrow.read_bytes())
    blob[-100] ^= 0xFF
    arrow.write_bytes(bytes(blob))
    proc = sh([sys.executable, "-m", "stages.zipf_bigram.train"], repo_copy, check=False)
    assert proc.returncode == 2
    assert "data/zipf_bigram/stats differs from what stage zipf_bigram-prepare recorded" in proc.stderr

    # a missing input another stage makes is named too
    results.unlink()
    proc = sh([sys.executable, "-m", "stages.zipf_bigram.evaluate"], repo_copy, check=False)
    assert proc.returncode == 2
    assert "data/zipf_bigram/results.json (made by stage zipf_bigram-train) is missing" in proc.stderr


def test_failed_stage_marks_its_run_failed_with_the_error(mini_copy, monkeypatch):
    repo_copy = mini_copy
    from stages.common.runtime.stage import stage
    from stages.zipf_bigram.params import ZipfParams

    monkeypatch.chdir(repo_copy)
    with pytest.raises(ValueError, match="boom"):
        with stage("zipf_bigram", "prepare", ZipfParams) as ctx:   # its inputs: code only
            run_id = ctx.run.run_id
            raise ValueError("boom: the fit did not converge")
    c = mlflow_client(repo_copy)
    r = c.get_run(run_id)
    assert r.info.status == "FAILED"
    assert r.data.tags["claimbench.error"] == "ValueError: boom: the fit did not converge"
    assert "ValueError: boom" in r.data.tags["mlflow.note.content"]
    tb = c.download_artifacts(run_id, "error.txt", str(repo_copy))
    text = Path(tb).read_text()
    assert "Traceback" in text and "test_failure_safety.py" in text


@pytest.mark.parametrize("mode", ["agent", "inprocess"])
def test_sigterm_while_the_outs_are_logged_fails_the_run(mini_copy, monkeypatch, mode):
    """The stage's work is done and its outs are being logged when SIGTERM comes: the run is
    closed FAILED with the signal (not left RUNNING by Python's default SIGTERM action). With
    the agent, the SIGTERM lands while the stage waits for the agent to log its outs."""
    from stages.common.runtime import tracking, tracking_agent
    from stages.common.runtime.stage import stage
    from stages.zipf_bigram.params import ZipfParams

    repo_copy = mini_copy
    monkeypatch.setenv("CLAIMBENCH_TRACKING", mode)
    if mode == "inprocess":
        def signalled(self, rel):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)

        monkeypatch.setattr(tracking.StageRun, "log_out", signalled)
    else:
        exchange = tracking_agent.Connection._exchange

        def signalled(self, payload):       # SIGTERM while the agent logs the outs
            if b'"op": "finish"' in payload:
                os.kill(os.getpid(), signal.SIGTERM)
            return exchange(self, payload)

        monkeypatch.setattr(tracking_agent.Connection, "_exchange", signalled)
    monkeypatch.chdir(repo_copy)
    previous = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(SystemExit, match="terminated by signal SIGTERM"):
            with stage("zipf_bigram", "prepare", ZipfParams) as ctx:   # its inputs: code only
                run_id = ctx.run.run_id
    finally:
        signal.signal(signal.SIGTERM, previous)
    r = mlflow_client(repo_copy).get_run(run_id)
    assert r.info.status == "FAILED"
    assert r.data.tags["claimbench.error"] == "terminated by signal SIGTERM"


def test_stopping_the_flow_stops_its_stages(mini_copy):
    repo_copy = mini_copy
    """SIGTERM to a flow (what a cancellation or a stopped worker sends) ends its stage
    processes too: none keeps running, none is retried, their MLflow runs end FAILED."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    flow = subprocess.Popen([sys.executable, "-m", "flows.pipeline", "zipf_bigram-train"], cwd=repo_copy,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stage = _stage_process(psutil.Process(flow.pid), "stages.zipf_bigram.prepare", timeout=180)
    run = _freeze_once_running(repo_copy, stage, "zipf_bigram-prepare")
    flow.send_signal(signal.SIGTERM)
    _wait_for_pending(stage, signal.SIGTERM)   # the flow's own SIGTERM to the stage
    stage.send_signal(signal.SIGCONT)
    out, err = flow.communicate(timeout=120)
    assert flow.returncode != 0
    assert "stopped 1 stage process" in out + err or "stopped 2 stage process" in out + err, out + err
    assert "dvc commit" not in out + err, out + err      # a stopped stage's outputs are not committed
    assert not stage.is_running() or stage.status() == psutil.STATUS_ZOMBIE
    assert attempts_of_stage(repo_copy, "zipf_bigram-prepare") == 1
    c = mlflow_client(repo_copy)
    stage_run = c.get_run(run.info.run_id)
    assert stage_run.info.status == "FAILED", (stage_run.data.tags, out + err)
    (flow_run,) = c.search_runs([c.get_experiment_by_name("pipeline").experiment_id])
    assert flow_run.info.status == "FAILED"
    assert flow_run.data.tags["claimbench.error"].startswith("the flow stopped")


def attempts_of_stage(root: Path, stage: str) -> int:
    c = mlflow_client(root)
    exp = c.get_experiment_by_name(stage.split("-")[0])
    return len(c.search_runs([exp.experiment_id], filter_string=f"tags.`dvc.stage` = '{stage}'"))
