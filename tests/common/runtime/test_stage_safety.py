"""stages.common.runtime.stage / tracking: leftovers of killed runs, deps checked against dvc.lock,
errors recorded on FAILED runs, orphaned RUNNING runs reaped, artifact location per store."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from stages.common.runtime import mlflow_client, tracking
from stages.common.runtime.dvcfile import Stage
from stages.common.io import dvc_md5
from stages.common.runtime.stage import _raise_on_sigterm, check_deps_against_lock, clean_leftovers, tracking_enabled

from tests.helpers import isolate_env


# --------------------------------------------------------------------------------------
# leftovers of a killed run
# --------------------------------------------------------------------------------------
def test_clean_leftovers_removes_only_this_stages_temps(tmp_path):
    """Temp files/folders of this stage's outs go; another out's temps and real files stay."""
    d = tmp_path / "data" / "s"
    d.mkdir(parents=True)
    (d / "results.json").write_text("{}")
    (d / ".tmp-results.json-abc123").write_text("{half")
    (d / ".tmp-stats-xyz").mkdir()
    (d / ".tmp-stats-xyz" / "part.arrow").write_bytes(b"\0")
    (d / ".tmp-other.json-q").write_text("not ours")
    removed = clean_leftovers(tmp_path, ["data/s/results.json", "data/s/stats", "data/missing/x.json"])
    assert sorted(p.name for p in removed) == [".tmp-results.json-abc123", ".tmp-stats-xyz"]
    assert sorted(p.name for p in d.iterdir()) == [".tmp-other.json-q", "results.json"]


def test_clean_leftovers_restores_an_interrupted_folder_swap(tmp_path):
    """Killed between the two renames of atomic_dir: the previous folder comes back."""
    (tmp_path / "data" / ".old-stats").mkdir(parents=True)
    (tmp_path / "data" / ".old-stats" / "a").write_text("previous")
    clean_leftovers(tmp_path, ["data/stats"])
    assert (tmp_path / "data" / "stats" / "a").read_text() == "previous"
    assert not (tmp_path / "data" / ".old-stats").exists()


# --------------------------------------------------------------------------------------
# deps against dvc.lock
# --------------------------------------------------------------------------------------
def _lock(root: Path, outs: dict[str, str]) -> None:
    (root / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": {
        "s-prepare": {"cmd": "x", "outs": [{"path": p, "md5": m} for p, m in outs.items()]}}}))


@pytest.fixture
def made(tmp_path):
    """A file and a folder that stage s-prepare made, recorded in dvc.lock."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "r.json").write_text('{"a": 1}\n')
    (tmp_path / "data" / "ds").mkdir()
    (tmp_path / "data" / "ds" / "x.arrow").write_bytes(b"1234")
    _lock(tmp_path, {"data/r.json": dvc_md5(tmp_path / "data" / "r.json"),
                     "data/ds": dvc_md5(tmp_path / "data" / "ds")})
    return tmp_path


# the DAG of these tests: s-prepare makes both files (what dvc.yaml would say), s-train reads them
DAG = {"s-prepare": Stage(name="s-prepare", cmd="x", deps=[], outs=["data/r.json", "data/ds"],
                          metrics=[], plots=[], params=[])}


def _check(root: Path, deps=("data/r.json", "data/ds", "stages/code.py"), stages=None):
    return check_deps_against_lock(root, "s-train", list(deps), tracking.hash_deps(root, deps),
                                   DAG if stages is None else stages)


def test_deps_as_recorded_pass(made):
    """Untouched outputs of the upstream stage (and deps no stage makes) raise nothing."""
    assert _check(made) == []


def test_truncated_dep_is_named_with_its_maker(made):
    """A truncated file: the message names the file, the stage that made it and the fix."""
    (made / "data" / "r.json").write_text('{"a"')
    (problem,) = _check(made)
    assert problem.startswith("data/r.json differs from what stage s-prepare recorded in dvc.lock")
    assert "`dvc repro s-prepare`" in problem and "`dvc commit s-prepare`" in problem
    assert "dvc checkout" not in problem, "the cache does not hold it: checkout cannot restore it"


def test_checkout_is_advised_only_when_the_cache_holds_the_file(made):
    want = dvc_md5(made / "data" / "r.json")
    obj = made / ".dvc" / "cache" / "files" / "md5" / want[:2] / want[2:]
    obj.parent.mkdir(parents=True)
    obj.write_bytes((made / "data" / "r.json").read_bytes())
    (made / "data" / "r.json").write_text('{"a"')
    (problem,) = _check(made)
    assert "`dvc repro s-prepare` or restore it with `dvc checkout data/r.json`" in problem


def test_a_stale_lock_entry_is_never_taken_as_a_producer(made, capsys):
    """A dvc.lock entry of a stage that no dvc.yaml defines (removed or renamed) recorded other
    bytes for data/r.json: ignored with a warning, and the live producer's record decides."""
    lock = yaml.safe_load((made / "dvc.lock").read_text())
    lock["stages"]["s-old"] = {"cmd": "y", "outs": [{"path": "data/r.json", "md5": "f" * 32}]}
    (made / "dvc.lock").write_text(yaml.safe_dump(lock))
    assert _check(made) == []
    assert "entry for stage s-old, which no dvc.yaml defines" in capsys.readouterr().err
    # and with the live producer gone from the DAG too, nothing is trusted for the file
    (made / "data" / "r.json").write_text("other bytes")
    assert _check(made, stages={}) == []


def test_an_out_the_producer_no_longer_declares_is_not_checked(made):
    """The lock still lists data/ds under s-prepare, but today's dvc.yaml has it make only
    data/r.json: the old record does not bind data/ds."""
    (made / "data" / "ds" / "x.arrow").write_bytes(b"other")
    only_r = {"s-prepare": Stage(name="s-prepare", cmd="x", deps=[], outs=["data/r.json"],
                                 metrics=[], plots=[], params=[])}
    assert _check(made, stages=only_r) == []
    assert _check(made) != []


def test_edited_file_inside_a_folder_dep_is_caught(made):
    (made / "data" / "ds" / "x.arrow").write_bytes(b"1235")
    (problem,) = _check(made)
    assert problem.startswith("data/ds differs")


def test_missing_dep_made_by_another_stage(made):
    (made / "data" / "r.json").unlink()
    (problem,) = _check(made)
    assert problem == "data/r.json (made by stage s-prepare) is missing; run `dvc repro s-prepare`"


def test_no_lock_or_own_outs_are_not_checked(made):
    """Without dvc.lock nothing is checked; a stage's own recorded outs are not its inputs."""
    (made / "data" / "r.json").write_text("changed")
    assert check_deps_against_lock(made, "s-prepare", ["data/r.json"],
                                   tracking.hash_deps(made, ["data/r.json"]), DAG) == []
    (made / "dvc.lock").unlink()
    assert _check(made) == []


def test_stage_cli_refuses_edited_input(tmp_path, sub_env, python_exe):
    """End to end through a stage's command: exit 2, the message, and no compute."""
    root = tmp_path / "repo"
    shutil_copy_repo_subset(root)
    (root / "data" / "zipf_bigram").mkdir(parents=True)
    res = root / "data" / "zipf_bigram" / "results.json"
    res.write_text('{"scaling": []}\n')
    lock = root / "stages" / "zipf_bigram" / "dvc.lock"   # the study's own lock records the file
    entries = yaml.safe_load(lock.read_text())
    entries["stages"]["zipf_bigram-train"]["outs"] = [{"path": "data/zipf_bigram/results.json",
                                                      "md5": "0" * 32}]
    lock.write_text(yaml.safe_dump(entries))
    proc = subprocess.run([python_exe, "-m", "stages.zipf_bigram.evaluate"], cwd=root,
                          env=sub_env(CLAIMBENCH_TRACKING="off"), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "its inputs are not what the pipeline made" in proc.stderr
    assert "data/zipf_bigram/results.json differs from what stage zipf_bigram-train recorded" in proc.stderr
    assert not (root / "reports" / "zipf_bigram" / "metrics.json").exists()


def shutil_copy_repo_subset(root: Path) -> None:
    import shutil

    repo = Path(__file__).resolve().parents[3]
    root.mkdir(parents=True)
    for name in ("dvc.yaml", "params.yaml"):
        shutil.copy2(repo / name, root / name)
    shutil.copytree(repo / "stages", root / "stages", ignore=shutil.ignore_patterns("__pycache__"))


# --------------------------------------------------------------------------------------
# tracking: errors, orphans, artifact locations
# --------------------------------------------------------------------------------------
def test_tracking_switch(monkeypatch):
    monkeypatch.delenv("CLAIMBENCH_TRACKING", raising=False)
    assert tracking_enabled()
    for off in ("off", "0", "false", "no", "OFF"):
        monkeypatch.setenv("CLAIMBENCH_TRACKING", off)
        assert not tracking_enabled()


def test_null_run_takes_every_log_call():
    run = tracking.NullRun()
    assert run.run_id is None
    assert run.log_curve("x", [1.0]) is None and run.log_metrics({"a": 1}) is None
    assert run.finish() is None
    with pytest.raises(AttributeError):
        run.no_such_thing


def test_error_line():
    assert tracking.error_line(ValueError("bad\nmore")) == "ValueError: bad"
    assert tracking.error_line(SystemExit(2)) == "exit status 2"
    assert tracking.error_line(SystemExit("terminated by signal SIGTERM")) == "terminated by signal SIGTERM"


def test_artifact_root_per_store(monkeypatch, tmp_path):
    """sqlite: mlartifacts/ beside it; a server: its own choice; the env var wins over both."""
    monkeypatch.delenv("CLAIMBENCH_ARTIFACT_ROOT", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert tracking.artifact_root(tmp_path) == (tmp_path / "mlartifacts").as_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:5000")
    assert tracking.artifact_root(tmp_path) is None
    monkeypatch.setenv("CLAIMBENCH_ARTIFACT_ROOT", "s3://bucket/claimbench")
    assert tracking.artifact_root(tmp_path) == "s3://bucket/claimbench"


@pytest.fixture
def store(monkeypatch, tmp_path):
    isolate_env(monkeypatch, tmp_path)
    return tracking.client(tmp_path)


def test_reap_orphans_fails_dead_runs_only(store, tmp_path):
    """RUNNING runs whose process died are FAILED with the reason; live, foreign-host and
    finished runs are left alone."""
    exp = tracking.ensure_experiment("orph", tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    me = tracking.process_tags()
    runs = {
        "dead": {**me, tracking.PID_TAG: str(dead.pid), "dvc.stage": "orph-train"},
        "alive": me,
        "foreign": {tracking.HOST_TAG: "another-host", tracking.PID_TAG: str(dead.pid)},
        "untagged": {},
    }
    ids = {k: store.create_run(exp, run_name=k, tags=v).info.run_id for k, v in runs.items()}
    done = store.create_run(exp, run_name="done", tags={**me, tracking.PID_TAG: str(dead.pid)}).info.run_id
    store.set_terminated(done, "FINISHED")

    assert tracking.reap_orphans(store, exp) == [ids["dead"]]
    r = store.get_run(ids["dead"])
    assert r.info.status == "FAILED"
    assert r.data.tags[tracking.ERROR_TAG].startswith(
        f"the stage orph-train process (pid {dead.pid} on {me[tracking.HOST_TAG]}) ended without closing")
    for k in ("alive", "foreign", "untagged"):
        assert store.get_run(ids[k]).info.status == "RUNNING", k
    assert store.get_run(done).info.status == "FINISHED"


def test_a_starting_stage_reaps_dead_runs_of_every_study(store, tmp_path):
    """A stage killed together with the tracking agent leaves its run RUNNING, and `dvc repro`
    may then restore that stage from its run cache, so no stage of its study runs again (found
    by benchmarks/pipeline/fault_campaign.py): the next stage of any study closes it."""
    exp = tracking.ensure_experiment("killed", tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    tags = {**tracking.process_tags(), tracking.PID_TAG: str(dead.pid), "dvc.stage": "killed-train"}
    orphan = store.create_run(exp, run_name="train", tags=tags).info.run_id
    run = tracking.StageRun("other", "evaluate", "other-evaluate", "smoke", {"a": 1}, root=tmp_path)
    run.finish()
    r = store.get_run(orphan)
    assert r.info.status == "FAILED"
    assert r.data.tags[tracking.ERROR_TAG].startswith("the stage killed-train process")


def test_stage_run_fail_records_error(store, tmp_path):
    run = tracking.StageRun("errs", "train", "errs-train", "smoke", {"a": 1}, root=tmp_path)
    try:
        raise RuntimeError("diverged at step 7")
    except RuntimeError as exc:
        run.fail(exc)
    r = store.get_run(run.run_id)
    assert r.info.status == "FAILED"
    assert r.data.tags[tracking.ERROR_TAG] == "RuntimeError: diverged at step 7"
    path = store.download_artifacts(run.run_id, "error.txt", str(tmp_path))
    assert "Traceback" in Path(path).read_text() and "diverged at step 7" in Path(path).read_text()


def test_signal_while_the_run_opens_still_fails_the_run(store, tmp_path, monkeypatch):
    """SIGTERM can land after the run is created but before StageRun returns (while it logs
    the params): the run it created is closed FAILED, not left RUNNING."""
    def interrupted(self, params):
        raise SystemExit("terminated by signal SIGTERM")

    monkeypatch.setattr(tracking.StageRun, "log_params", interrupted)
    with pytest.raises(SystemExit):
        tracking.StageRun("sig", "train", "sig-train", "smoke", {"a": 1}, root=tmp_path)
    (r,) = store.search_runs([store.get_experiment_by_name("sig").experiment_id])
    assert r.info.status == "FAILED"
    assert r.data.tags[tracking.ERROR_TAG] == "terminated by signal SIGTERM"


@pytest.fixture
def sigterm_handler():
    """Restore this process's SIGTERM handler after a test that installs its own."""
    previous = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, previous)


def test_sigterm_deferred_holds_the_signal_until_the_block_ends(sigterm_handler):
    got = []
    signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))
    with tracking.sigterm_deferred():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        assert got == []                        # pending, not delivered
    assert got == [signal.SIGTERM]              # delivered as the block ends


def test_sigterm_deferred_leaves_a_handler_set_outside_python_alone(monkeypatch, sigterm_handler):
    """getsignal() is None for a handler a C library installed: it could not be restored, so
    the block runs with it in place (nothing deferred) instead of failing on the way out."""
    calls = []
    monkeypatch.setattr(mlflow_client.signal, "getsignal", lambda signum: None)
    monkeypatch.setattr(mlflow_client.signal, "signal", lambda *a: calls.append(a))
    with tracking.sigterm_deferred():
        pass
    assert calls == []


def test_sigterm_right_after_the_run_is_created_still_fails_the_run(store, tmp_path, monkeypatch,
                                                                    sigterm_handler):
    """The window between MLflow writing the run and StageRun knowing its id: a SIGTERM there
    waits until the id is known, so the run is closed FAILED, not left RUNNING."""
    real = type(store).create_run

    def create_then_signalled(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)                        # lands here without the deferral
        return out

    monkeypatch.setattr(type(store), "create_run", create_then_signalled)
    signal.signal(signal.SIGTERM, _raise_on_sigterm)
    with pytest.raises(SystemExit, match="terminated by signal SIGTERM"):
        tracking.StageRun("sig2", "train", "sig2-train", "smoke", {"a": 1}, root=tmp_path)
    (r,) = store.search_runs([store.get_experiment_by_name("sig2").experiment_id])
    assert r.info.status == "FAILED"
    assert r.data.tags[tracking.ERROR_TAG] == "terminated by signal SIGTERM"


def test_study_parent_nests_under_flow_run(store, tmp_path):
    flow = tracking.open_flow_run("flow x", {"profile": "smoke"}, tmp_path)
    mid = tracking.open_study_parent("st", flow, "flow x", tmp_path)
    r = store.get_run(mid)
    assert r.data.tags["mlflow.parentRunId"] == flow
    assert store.get_experiment(r.info.experiment_id).name == "st"
    assert store.get_experiment(store.get_run(flow).info.experiment_id).name == "pipeline"
    assert r.info.run_name == "flow x"


# --------------------------------------------------------------------------------------
# missing inputs, from dvc.yaml (before any dvc.lock records their producer)
# --------------------------------------------------------------------------------------
def test_a_missing_input_names_the_stage_that_makes_it(tmp_path):
    from stages.common.runtime.stage import missing_inputs

    stages = {
        "params": Stage("params", "x", [], ["reports/params.ok"], [], [], [], meta={"gate": True}),
        "s-prepare": Stage("s-prepare", "x", [], ["data/s/x.npz", "data/s/cache"], [], [], [],
                           file="stages/s/dvc.yaml"),
        "t-train": Stage("t-train", "x", [], ["data/t/shard-0"], [], [], [], file="stages/t/dvc.yaml"),
    }
    deps = ["stages/s/train.py", "reports/params.ok", "data/s/x.npz", "data/s/cache/part.arrow", "data/t"]
    assert missing_inputs(tmp_path, "s-train", deps, stages) == [
        "data/s/x.npz (made by stage s-prepare) is missing; run `dvc repro stages/s/dvc.yaml:s-prepare`",
        "data/s/cache/part.arrow (made by stage s-prepare) is missing; run `dvc repro stages/s/dvc.yaml:s-prepare`"]
    (tmp_path / "data/s/cache").mkdir(parents=True)
    (tmp_path / "data/s/cache/part.arrow").write_bytes(b"")
    (tmp_path / "data/s/x.npz").write_bytes(b"")
    assert missing_inputs(tmp_path, "s-train", deps, stages) == []       # a gate's out and a folder of outs: not checked
    assert missing_inputs(tmp_path, "s-prepare", ["data/s/x.npz"], stages) == []   # its own out


def test_a_stage_run_by_hand_without_its_input_exits_2_naming_the_producer(tmp_path, stage_env, python_exe):
    """The wrapper's check comes before the stage's own code: escort_belief's evaluate, run by
    hand in a checkout with no data, names prepare, which makes its problems."""
    from tests.helpers import stops_without_input

    err = stops_without_input(tmp_path, "stages.escort_belief.evaluate",
                              "dvc repro stages/escort_belief/dvc.yaml:escort_belief-prepare", stage_env, python_exe)
    assert "data/escort_belief/problems.npz (made by stage escort_belief-prepare) is missing" in err


def _install_then_signal(kind: str) -> None:
    """In a forked child: SIGTERM with the handler it installed itself (as a stage run in a forked
    process does) or the one it inherited; exit 3 if that raised SystemExit."""
    from stages.common.runtime.stage import _set_sigterm

    if kind == "installed":
        _set_sigterm(_raise_on_sigterm)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    except SystemExit:
        os._exit(3)
    os._exit(0)


@pytest.mark.parametrize("kind,code", [("installed", 3), ("inherited", -signal.SIGTERM)])
def test_the_stage_handler_raises_only_in_the_process_that_installed_it(kind, code):
    """The process that installed the stage's SIGTERM handler gets SystemExit (the stage unwinds,
    its run ends FAILED); a process forked from it that did not install it ends by SIGTERM's
    default action (a pool worker: see tests/common/test_forkpool.py)."""
    import multiprocessing

    from stages.common.runtime.stage import _set_sigterm

    before = _set_sigterm(_raise_on_sigterm)
    try:
        child = multiprocessing.get_context("fork").Process(target=_install_then_signal, args=(kind,))
        child.start()
        child.join(30)
    finally:
        signal.signal(signal.SIGTERM, before)
    assert child.exitcode == code
