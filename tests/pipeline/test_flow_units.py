"""flows/: the pieces of the flow and the deployments that need no server."""
from __future__ import annotations

from pathlib import Path

import pytest
from prefect.states import Failed

from flows import deploy, pipeline, plan, procs, runs, slots, workspace
from stages.common.runtime import params as params_mod
from stages.common.runtime.dvcfile import load_stages

REPO = Path(__file__).resolve().parents[2]


def _retry(exc) -> bool:
    return pipeline._retryable(None, None, Failed(data=exc))


def test_retry_condition():
    """Bad input (exit 2) is final; other exits, signals and other errors are retried."""
    assert not _retry(procs.StageFailed("s", 2, "error: bad"))
    assert _retry(procs.StageFailed("s", 1, "Traceback ..."))
    assert _retry(procs.StageFailed("s", -9, ""))
    assert _retry(RuntimeError("dvc commit s failed"))


def test_stage_failed_message():
    assert str(procs.StageFailed("a-train", -9, "")) == "stage a-train failed (killed by signal 9)"
    assert str(procs.StageFailed("a-train", 1, "x\nValueError: nan loss\n")) == \
        "stage a-train failed (exit status 1): ValueError: nan loss"


def test_gpu_stages_come_from_dvc_yaml():
    """The one place GPU stages are named is dvc.yaml's meta.gpu; the flow reads it from there."""
    stages = load_stages(REPO)
    assert slots.gpu_stages(stages) == [n for n, s in stages.items() if s.meta.get("gpu") is True]
    assert "zipf_bigram-train" in slots.gpu_stages(stages)
    flow_src = "".join(p.read_text() for p in sorted((REPO / "flows").glob("*.py")))
    for name in stages:
        assert f'"{name}"' not in flow_src, f"flows/ names the stage {name}"


def test_gpu_slots_and_tags(monkeypatch):
    """GPU stages are tagged `gpu`; the per-host limit tag only where there are devices."""
    import socket

    monkeypatch.setenv("CLAIMBENCH_GPU_SLOTS", "3")
    assert slots.default_gpu_slots() == 3
    assert slots.gpu_task_tags(3) == ["gpu", f"gpu@{socket.gethostname()}"]
    assert slots.gpu_task_tags(0) == ["gpu"]
    monkeypatch.delenv("CLAIMBENCH_GPU_SLOTS")
    monkeypatch.setenv("PATH", "/nonexistent")          # no nvidia-smi: a CPU machine
    assert slots.default_gpu_slots() == 0


def test_deployments_are_valid():
    """Cron strings parse, parameters are the flow's, pools are the CPU and GPU ones."""
    import inspect

    from prefect.client.schemas.schedules import CronSchedule

    flow_params = set(inspect.signature(pipeline.pipeline.fn).parameters)
    names = [d.name for d in deploy.DEPLOYMENTS]
    assert len(set(names)) == len(names) == 2
    for d in deploy.DEPLOYMENTS:
        CronSchedule(cron=d.cron, timezone="UTC")
        assert set(d.parameters) <= flow_params
        assert d.parameters["profile"] in ("smoke", "default", "paper")
    pools = {d.name: d.work_pool for d in deploy.DEPLOYMENTS}
    assert pools == {"nightly": deploy.CPU_POOL, "paper-gpu": deploy.GPU_POOL}
    with pytest.raises(ValueError, match="unknown deployment"):
        deploy.deploy(REPO, only=["nope"])


def test_set_profile_rewrites_only_common_profile(tmp_path):
    """A profile's workspace gets params.yaml with common.profile set and nothing else changed
    (ruamel round-trip: comments and layout kept)."""
    text = (REPO / "params.yaml").read_text()
    (tmp_path / "params.yaml").write_text(text)
    params_mod.set_profile(tmp_path / "params.yaml", "paper")
    new = (tmp_path / "params.yaml").read_text()
    diff = [(a, b) for a, b in zip(text.splitlines(), new.splitlines()) if a != b]
    assert len(text.splitlines()) == len(new.splitlines())
    assert len(diff) == 1 and diff[0][1].split("#")[0].strip() == "profile: paper", diff
    assert diff[0][1].split("#")[1] == diff[0][0].split("#")[1]          # its comment kept
    (tmp_path / "bad.yaml").write_text("common:\n  seeds: {}\n")
    with pytest.raises(ValueError, match="no common.profile"):
        params_mod.set_profile(tmp_path / "bad.yaml", "paper")


def test_topological_order():
    edges = {"a": set(), "b": {"a"}, "c": {"a"}, "d": {"b", "c"}}
    order = plan.topological(dict.fromkeys("dcba"), edges)
    assert order.index("a") < order.index("b") < order.index("d")
    assert order.index("c") < order.index("d")


def test_branches_counts_independent_chains():
    """Two studies' chains are two branches; the ledger joining them is not a third; one chain is one."""
    edges = {"a-prepare": set(), "a-train": {"a-prepare"}, "b-prepare": set(), "b-train": {"b-prepare"},
             "ledger": {"a-train", "b-train"}}
    assert plan.branches(list(edges), edges) == 2
    assert plan.branches(["a-prepare", "a-train", "ledger"], edges) == 1
    assert plan.branches(["ledger"], edges) == 1
    edges["a-plot"] = {"a-prepare"}            # two stages of one study after the same prepare
    assert plan.branches(["a-prepare", "a-train", "a-plot"], edges) == 1
    assert plan.branches(["a-train", "a-plot"], edges) == 2


def test_thread_env_shares_out_the_cores(monkeypatch):
    for v in slots.THREAD_VARS:
        monkeypatch.delenv(v, raising=False)
    assert slots.thread_env(1, cores=2) == {}
    assert slots.thread_env(2, cores=2) == dict.fromkeys(slots.THREAD_VARS, "1")
    assert slots.thread_env(2, cores=16)["OMP_NUM_THREADS"] == "8"
    assert slots.thread_env(5, cores=2)["OMP_NUM_THREADS"] == "1"
    monkeypatch.setenv("OMP_NUM_THREADS", "3")          # what the user set wins
    assert slots.thread_env(2, cores=2) == {}


def test_chain_seconds_is_the_longest_estimated_path_ahead(tmp_path):
    """a -> b and c alone; the ledger recorded a 10 s, b 5 s, c 12 s; d never ran (1 s)."""
    import json

    (tmp_path / "stages/ledger").mkdir(parents=True)
    (tmp_path / "stages/ledger/runs.json").write_text(json.dumps({"default": {"studies": {
        "s": {"stages": {"a": {"compute_s": 10.0}, "b": {"compute_s": 5.0}, "c": {"compute_s": 12.0}}}}}}))
    edges = {"a": set(), "b": {"a"}, "c": set(), "d": {"b"}}
    ahead = plan.chain_seconds(tmp_path, ["a", "c", "b", "d"], edges, "default")
    assert ahead == {"a": 16.0, "b": 6.0, "c": 12.0, "d": 1.0}
    # no ledger: every stage counts 1 s, so the longest chain in stages goes first
    assert plan.chain_seconds(tmp_path / "none", ["a", "b"], {"a": set(), "b": {"a"}}, "default") == {"a": 2.0, "b": 1.0}


def test_priority_slots_hand_a_free_slot_to_the_highest_priority():
    """One slot, held; three stages queue with priorities 1, 3, 2: they get it as 3, 2, 1."""
    import threading
    import time

    ps = slots.PrioritySlots(1)
    got: list[float] = []
    gate = ps.slot(99.0)
    gate.__enter__()
    workers = []
    for p in (1.0, 3.0, 2.0):
        def take(p=p):
            with ps.slot(p):
                got.append(p)
        t = threading.Thread(target=take)
        t.start()
        workers.append(t)
    while len(ps.waiting) < 3:
        time.sleep(0.01)
    gate.__exit__(None, None, None)
    for t in workers:
        t.join(timeout=5)
    assert got == [3.0, 2.0, 1.0] and ps.free == 1


def test_a_free_slot_waits_for_the_best_ready_stage_that_has_not_asked_yet():
    """Prefect starts the tasks released by one upstream in no set order: a low-priority stage
    that asks first must not take the slot from a ready high-priority one still starting; a
    ready stage that never asks holds nothing back after the grace period."""
    import threading
    import time

    ps = slots.PrioritySlots(1, grace_s=1.0)
    ps.expect("up", 9.0, set())
    ps.expect("long", 5.0, {"up"})
    ps.expect("short", 1.0, {"up"})
    got: list[str] = []
    with ps.slot(9.0, "up"):
        pass
    ps.done("up")                              # both are ready now; "short" asks first

    def take(name, p):
        with ps.slot(p, name):
            got.append(name)

    short = threading.Thread(target=take, args=("short", 1.0))
    short.start()
    time.sleep(0.3)
    assert got == []                              # held for "long", which has not asked
    take("long", 5.0)
    short.join(timeout=5)
    assert got == ["long", "short"]

    ps.expect("never", 7.0, set())             # ready at once, never asks
    t0 = time.monotonic()
    take("late", 2.0)
    assert got[-1] == "late" and 0.9 <= time.monotonic() - t0 < 3.0


def test_flow_and_task_code_can_be_shipped_to_other_processes():
    """A distributed task runner pickles the flow's and the task's code by value; locks they
    referred to directly would make that fail (the flow run's state is in a context variable)."""
    import cloudpickle

    for fn in (pipeline.pipeline.fn, pipeline.run_stage.fn, pipeline._retryable):
        cloudpickle.dumps(fn)


def test_stopping_kills_a_stage_that_ignores_sigterm_and_fails_its_run(tmp_path, monkeypatch):
    """A stage that does not end on SIGTERM is SIGKILLed after the grace period; it could not
    close its MLflow run, so the flow marks it FAILED before it exits."""
    import subprocess
    import sys

    from stages.common.runtime import tracking

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.setenv("CLAIMBENCH_ARTIFACT_ROOT", (tmp_path / "artifacts").as_uri())
    exp = tracking.ensure_experiment("stub", tmp_path)
    stubborn = subprocess.Popen([sys.executable, "-c",
                                 "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                                 "print('ready', flush=True); time.sleep(60)"],
                                stdout=subprocess.PIPE, text=True)
    assert stubborn.stdout.readline().strip() == "ready"
    c = tracking.client(tmp_path)
    run_id = c.create_run(exp, tags={**tracking.process_tags(), tracking.PID_TAG: str(stubborn.pid),
                                     "dvc.stage": "stub-train"}).info.run_id
    processes = procs.StageProcesses()
    processes.children[stubborn.pid] = "stub-train"
    stopped, killed = processes.stop(grace=1.0)
    assert stopped == [stubborn.pid] and killed == {"stub-train"}
    for name in killed:
        runs.reap(name, tmp_path)
    stubborn.wait(timeout=10)        # stop reaped it (so its status reads 0 here)
    import psutil

    assert not psutil.pid_exists(stubborn.pid)
    r = c.get_run(run_id)
    assert r.info.status == "FAILED"
    assert "ended without closing" in r.data.tags[tracking.ERROR_TAG]


def test_a_stage_s_output_arrives_line_by_line_while_it_runs(tmp_path):
    """Each line (a progress bar's carriage returns end lines too) reaches the callback as the
    stage writes it, not when it exits; the failure message keeps the last lines of stderr."""
    import sys
    import time

    script = ("import sys, time\n"
              "print('one', flush=True); time.sleep(0.6)\n"
              "sys.stderr.write('bar 10%\\rbar 50%\\rbar 100%\\n'); sys.stderr.flush(); time.sleep(0.6)\n"
              "print('two', flush=True); sys.exit(3)\n")
    seen: list[tuple[float, str]] = []
    t0 = time.monotonic()
    rc, tail = procs.StageProcesses().run("s-train", f"{sys.executable} -c \"{script}\"", tmp_path, {},
                                          lambda line: seen.append((time.monotonic() - t0, line)))
    end = time.monotonic() - t0
    assert rc == 3 and [line for _, line in seen] == ["one", "bar 10%", "bar 50%", "bar 100%", "two"]
    assert seen[0][0] < end - 1.0                # "one" arrived while the stage still ran
    assert tail == "bar 10%\nbar 50%\nbar 100%"
    assert "exit status 3" in str(procs.StageFailed("s-train", rc, tail))


def test_a_stopping_flow_starts_no_stage():
    processes = procs.StageProcesses()
    processes.stopping.set()
    with pytest.raises(procs.StageFailed, match="not started: the flow is stopping"):
        processes.run("s-train", "true", ".", {}, print)


def test_the_shards_of_a_matrix_stage_count_as_branches():
    """escort_belief-train@0 and @1 run side by side: two branches, so each gets half the cores."""
    edges = {"e-prepare": set(), "e-train@0": {"e-prepare"}, "e-train@1": {"e-prepare"},
             "e-evaluate": {"e-train@0", "e-train@1"}}
    assert plan.branches(list(edges), edges) == 2
    order = plan.topological(edges, edges)
    assert order[0] == "e-prepare" and order[-1] == "e-evaluate"


def test_a_profile_workspace_gets_the_code_but_no_outputs(tmp_path):
    """The checkout's code and params are copied in (tracked and new files), DVC's outputs and
    dvc.lock files are not; a second sync copies nothing; a file the checkout lost goes."""
    ws = tmp_path / "ws"
    assert workspace.workspace_path(REPO, None) == REPO
    assert workspace.workspace_path(REPO, workspace.active_profile(REPO)) == REPO
    assert workspace.workspace_path(REPO, "paper") == REPO / ".claimbench/profiles/paper"
    assert workspace.sync(REPO, ws) > 100
    assert (ws / "params.yaml").is_file() and (ws / "stages/zipf_bigram/train.py").is_file()
    assert (ws / "stages/zipf_bigram/dvc.yaml").is_file() and (ws / "reports/params.ok").exists() is False
    assert not (ws / "stages/zipf_bigram/dvc.lock").exists() and not (ws / "reports/claims.json").exists()
    assert not (ws / "reports/zipf_bigram/metrics.json").exists()
    assert workspace.sync(REPO, ws) == 0
    (ws / workspace.SYNCED).write_text((ws / workspace.SYNCED).read_text() + "stages/gone.py\n")
    (ws / "stages/gone.py").write_text("x = 1\n")
    assert workspace.sync(REPO, ws) == 1 and not (ws / "stages/gone.py").exists()


def test_a_recorded_service_is_known_by_its_start_time_within_a_clock_step():
    """psutil's create_time adds the boot time, which moves with wall-clock adjustments: a
    service recorded a second earlier is still ours; a pid reused minutes later is not."""
    import os

    import psutil

    from flows.stack import same_start

    me = psutil.Process(os.getpid())
    assert same_start(me, me.create_time()) and same_start(me, me.create_time() + 1.0)
    assert not same_start(me, me.create_time() - 300.0)


def test_an_unknown_target_is_named_and_exits_2_before_any_stage(monkeypatch, capsys):
    """`claimbench flow nosuch`: the plan names the pipeline's stages, and the command line exits
    2 (a name to fix, nothing a retry mends) without starting Prefect's server."""
    with pytest.raises(ValueError, match=r"unknown stage\(s\) \['nosuch'\]; the pipeline has \[.*'ledger'"):
        plan.plan(REPO, ["nosuch"], stages=load_stages(REPO))
    monkeypatch.setattr(pipeline, "start_ephemeral_api", lambda: None)
    monkeypatch.setattr(pipeline.signal, "signal", lambda *a: None)     # keep pytest's own SIGTERM handling

    def refuse(*a, **k):
        raise ValueError("unknown stage(s) ['nosuch']; the pipeline has ['ledger']")

    monkeypatch.setattr(pipeline, "prepare", refuse)
    assert pipeline.main(["nosuch"]) == 2
    assert "pipeline failed: unknown stage(s) ['nosuch']" in capsys.readouterr().err
