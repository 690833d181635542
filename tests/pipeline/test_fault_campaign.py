"""The fault campaign (benchmarks/pipeline/fault_campaign.py) at CI size: a few SIGKILLs of
`dvc repro` on a copy with one small study and the ledger, each survived; and its pure parts (the points a seed chooses, the
checks) on tiny fakes, each check made to fail once on purpose."""
from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from benchmarks.pipeline.fault_campaign import (
    Dag, build_reference, choose_points, differing_outputs, leftovers, run_point, running_runs,
    stop_agents)

pytestmark = pytest.mark.machinery
STUDY = "mnl_assortment"        # deterministic to the byte, and a smoke chain of seconds

A = "stages/s/dvc.yaml:s-"
FAKE = Dag(order=["params", f"{A}prepare", f"{A}train", f"{A}evaluate", "ledger"],
           seconds={"params": 1.0, f"{A}prepare": 5.0, f"{A}train": 10.0, f"{A}evaluate": 2.0, "ledger": 3.0},
           downstream={"params": ["params", f"{A}prepare", f"{A}train", f"{A}evaluate", "ledger"],
                       f"{A}prepare": [f"{A}prepare", f"{A}train", f"{A}evaluate", "ledger"],
                       f"{A}train": [f"{A}train", f"{A}evaluate", "ledger"],
                       f"{A}evaluate": [f"{A}evaluate", "ledger"], "ledger": ["ledger"]},
           model_stages=[f"{A}train"], ledger="ledger")


def test_a_seed_chooses_the_same_points():
    points = choose_points(1000, 40, FAKE)
    assert points == choose_points(1000, 40, FAKE)
    assert points != choose_points(1001, 40, FAKE)
    assert [p.index for p in points] == list(range(40))
    assert {p.phase for p in points} == {"time", "finish", "model", "ledger"}
    assert any(p.agent for p in points) and not all(p.agent for p in points)
    for p in points:
        assert "ledger" in FAKE.downstream[p.start]
        if p.phase == "model":          # starts at or before the stage that logs a model
            assert f"{A}train" in FAKE.downstream[p.start]
        if p.phase == "time":           # within the redone stages' reference time
            assert 0 <= p.delay_s <= sum(FAKE.seconds[s] for s in FAKE.downstream[p.start])
        assert p.start != "params"      # forcing it would redo everything, twice


def _fake_build(root: Path) -> Path:
    (root / "reports/s").mkdir(parents=True)
    (root / "data/s").mkdir(parents=True)
    (root / "reports/s/metrics.json").write_text(json.dumps({"score": 0.5, "seconds": 1.25}))
    (root / "reports/s/plot.png").write_bytes(bytes(range(64)))
    (root / "data/s/results.json").write_text(json.dumps({"x": [1, 2, 3]}))
    return root


def test_the_output_check_finds_a_changed_byte_but_not_a_wall_time(tmp_path):
    ref = _fake_build(tmp_path / "ref")
    work = tmp_path / "work"
    shutil.copytree(ref, work)
    assert differing_outputs(ref, work) == []
    (work / "reports/s/metrics.json").write_text(json.dumps({"score": 0.5, "seconds": 9.75}))
    assert differing_outputs(ref, work) == []          # a wall time may differ
    blob = bytearray((work / "reports/s/plot.png").read_bytes())
    blob[10] ^= 1
    (work / "reports/s/plot.png").write_bytes(bytes(blob))
    assert differing_outputs(ref, work) == ["differs: reports/s/plot.png"]
    (work / "data/s/results.json").unlink()
    assert "missing: data/s/results.json" in differing_outputs(ref, work)


def test_the_mlflow_check_finds_a_running_run(tmp_path):
    assert running_runs(tmp_path) == []                 # no store: nothing running
    with sqlite3.connect(tmp_path / "mlruns.db") as con:    # the columns the check reads
        con.execute("CREATE TABLE runs (run_uuid TEXT, name TEXT, status TEXT, lifecycle_stage TEXT)")
        con.execute("CREATE TABLE tags (key TEXT, value TEXT, run_uuid TEXT)")
        con.executemany("INSERT INTO runs VALUES (?, ?, ?, 'active')",
                        [("r1", "prepare", "FINISHED"), ("r2", "train", "FAILED")])
    assert running_runs(tmp_path) == []
    with sqlite3.connect(tmp_path / "mlruns.db") as con:
        con.execute("INSERT INTO runs VALUES ('r3', 'train', 'RUNNING', 'active')")
        con.execute("INSERT INTO tags VALUES ('dvc.stage', 's-train', 'r3')")
    t0 = time.monotonic()
    assert running_runs(tmp_path, grace=1.0) == ["s-train r3"]
    assert time.monotonic() - t0 >= 1.0                 # it gave the agent its grace


def test_the_leftover_check_finds_a_temp_file(tmp_path):
    root = _fake_build(tmp_path / "repo")
    assert leftovers(root) == []
    (root / "data/s/.tmp-results.json-x1y2").write_text("half")
    assert leftovers(root) == ["data/s/.tmp-results.json-x1y2"]


@pytest.fixture
def tiny_copy(tmp_path) -> Path:
    """The mini copy's shape (one study and the ledger, smoke profile) with mnl_assortment, whose
    smoke chain takes seconds, for zipf_bigram's: building that alone took 50 s on 2 cores."""
    from stages.common.runtime.checkout import copy_checkout

    from .conftest import REPO

    return copy_checkout(REPO, tmp_path / "repo", profile="smoke", only=[STUDY])


def test_kill_points_on_a_tiny_copy_are_all_survived(tiny_copy, tmp_path):
    """Three kill points (seed 10) in the last stages: while the agent logs a stage's outs, in the
    ledger, and while the agent logs the ledger's outs (killing the agent too): every rerun comes out
    as the uninterrupted build, no MLflow run RUNNING, `dvc status` clean, no leftovers. (No point
    here lands where DVC rewrites .dvc/tmp/rwlock, which a SIGKILL can leave corrupt: the campaign
    counts that apart.)"""
    dag = build_reference(tiny_copy)
    stop_agents(tiny_copy)
    late = [a for a in dag.order if a.split(":")[-1] in (f"{STUDY}-evaluate", "ledger")]
    tail = Dag(late, dag.seconds, dag.downstream, [], dag.ledger)     # cheap points: short suffixes
    points = choose_points(10, 3, tail)
    assert [p.phase for p in points] == ["finish", "ledger", "finish"], points
    assert points[2].agent
    outcomes = [run_point(tiny_copy, tmp_path / f"p{p.index}" / "repo", p, grace=15.0, keep_failed=False,
                          next_stage=dag.ledger) for p in points]
    failed = [(o.point.describe(), o.what, o.rerun, o.problems) for o in outcomes if o.problems]
    assert not failed, failed
    assert sum(o.killed for o in outcomes) >= 2, [(o.point, o.what) for o in outcomes]


def test_the_flow_removes_an_rwlock_a_killed_dvc_left_empty(tmp_path):
    """A SIGKILL while DVC rewrites .dvc/tmp/rwlock leaves it empty and every DVC command fails
    (a point of the campaign found it): the flow's DVC calls remove it first; a readable one stays."""
    from flows.procs import repair_rwlock

    lock = tmp_path / ".dvc" / "tmp" / "rwlock"
    assert repair_rwlock(tmp_path) is False              # none there
    lock.parent.mkdir(parents=True)
    lock.write_text('{"read": {}, "write": {}}')
    assert repair_rwlock(tmp_path) is False and lock.exists()
    lock.write_text("")
    assert repair_rwlock(tmp_path) is True and not lock.exists()
    lock.write_text('{"read": {"data/x": [{"pid": 1, "cm')    # cut off mid-write
    assert repair_rwlock(tmp_path) is True and not lock.exists()
