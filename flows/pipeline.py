"""The claimbench pipeline as a Prefect flow, driven by the pipeline's dvc.yaml files (the root's and
each study's; never a second copy of the DAG).

    python -m flows.pipeline [--profile smoke] [target ...]

1. Take the workspace lock (one flow run at a time per workspace), ask DVC which stages are
   stale (``dvc status``) and add everything downstream of them (:mod:`flows.plan`). On a profile
   other than params.yaml's, the run works in that profile's own workspace and leaves the
   checkout untouched (:mod:`flows.workspace`).
2. Create the MLflow store and experiments once, then open a parent run for this flow run
   (experiment ``pipeline``) and, in each study's experiment, a run that stands for it there
   (:mod:`flows.runs`). From the command line with no Prefect server configured, step 1 and the
   store's creation run while Prefect's ephemeral server starts (~10 s on 2 cores), and the flow
   run takes their result up.
3. Submit one Prefect task per stale stage in dependency order; a task waits only for its
   own upstream stages, so independent stages run concurrently, each in its own process
   (the stage's ``cmd`` from dvc.yaml), at most ``max_parallel`` at a time, the longest chain
   first (:mod:`flows.slots`). A stage's output reaches the Prefect log line by line while it
   runs (:mod:`flows.procs`). A stage is then recorded with ``dvc commit`` — one commit at a time,
   because DVC holds a repository lock — so dvc.lock and the cache are updated exactly as
   ``dvc repro`` would.
4. Afterwards ``dvc status`` is clean and ``dvc repro`` does nothing.

Failures: a stage that fails is retried (``retries``, ``retry_delay_s``) unless it exited
with status 2 (bad params or inputs: a retry cannot help). Stages downstream of a stage that
failed are not run; independent ones still are. The flow then fails with a message naming
every failed stage and why, and its MLflow runs are marked FAILED.

GPU stages (``meta: {gpu: true}`` in dvc.yaml) run with the Prefect tag ``gpu``; on a
machine with CUDA devices also with ``gpu@<host>``, whose tag concurrency limit
(``gpu_slots``, default: the number of devices) keeps them from sharing a device.

What one flow run shares between its tasks (its stage slots and stage processes) lives in a
:class:`FlowRunState` that the flow sets in a context variable, which Prefect hands to the tasks'
threads; a task shipped to another process (a Dask worker) finds none and runs under its
worker's own limits.
"""
from __future__ import annotations

import argparse
import contextlib
import contextvars
import dataclasses
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.task_runners import ThreadPoolTaskRunner

from stages.common.runtime.dvcfile import load_stages, upstream
from stages.common.runtime.params import repo_root

from .plan import CHECK_STAGE, branches, chain_seconds, flow_studies, plan
from .procs import (NOT_RETRYABLE_EXIT, StageFailed, StageProcesses, api_target, dvc_api, dvc_env, killed_by,
                    pull_inputs, push_outputs, remote_name, up_to_date, workspace_lock)
from .runs import FlowRuns, ensure_experiments, reap
from .slots import PrioritySlots, default_gpu_slots, ensure_gpu_limit, gpu_task_tags, thread_env
from .workspace import prepare_workspace, workspace_path

# Prefect's thread runner waits for a task's upstream inside the task's thread: with a thread for
# every stage (the whole DAG is ~120), a stage starts as soon as its upstream is done, and the
# stage slots may hold a free slot for it (PrioritySlots); with fewer, it would queue behind
# stages still waiting. Waiting threads cost no CPU; the stage processes are capped by the slots.
TASK_THREADS = 256


class PipelineFailed(RuntimeError):
    """Some stages failed; the message names them (and those skipped because of them).
    ``bad_input``: every failed stage exited with the bad-input status (2): a param, a file or a
    name to fix, which no retry mends; the command line then exits 2 as the stage did."""

    def __init__(self, message: str, bad_input: bool = False):
        super().__init__(message)
        self.bad_input = bad_input


@dataclasses.dataclass
class FlowRunState:
    """What the tasks of one flow run share: at most so many stage processes at once (``slots``;
    None: no limit here) and the stage processes, to stop them with the flow."""
    slots: PrioritySlots | None = None
    processes: StageProcesses = dataclasses.field(default_factory=StageProcesses)

    def slot(self, priority: float, name: str):
        return self.slots.slot(priority, name) if self.slots else contextlib.nullcontext()

    def done(self, name: str) -> None:
        if self.slots:
            self.slots.done(name)


_STATE: contextvars.ContextVar[FlowRunState | None] = contextvars.ContextVar("claimbench_flow_run", default=None)


def current_state() -> FlowRunState:
    """The flow run's shared state; a task in another process gets one of its own."""
    return _STATE.get() or FlowRunState()


def _enter_state(state: FlowRunState) -> contextvars.Token:
    # functions, not the variable, in the flow's body: a distributed task runner pickles the
    # flow's code by value, and a context variable cannot be pickled
    return _STATE.set(state)


def _leave_state(token: contextvars.Token) -> None:
    _STATE.reset(token)


def _retryable(task, task_run, state) -> bool:  # noqa: ARG001 - Prefect's retry_condition_fn signature
    exc = state.data if isinstance(state.data, BaseException) else None
    if current_state().processes.stopping.is_set():
        return False
    return not (isinstance(exc, StageFailed) and exc.returncode == NOT_RETRYABLE_EXIT)


@task(task_run_name="{name}", retry_condition_fn=_retryable)
def run_stage(name: str, cmd: str, root: str, parent_run_id: str | None,
              recheck: bool = False, threads: dict[str, str] | None = None, address: str | None = None,
              priority: float = 0.0) -> dict:
    """Run one dvc.yaml stage's command in its own process, then record it with `dvc commit`.

    ``recheck``: an upstream stage ran first; if DVC now finds this one up to date (the
    upstream remade identical outputs), it is not run, as ``dvc repro`` would not run it.
    ``address``: how DVC names the stage (``stages/<study>/dvc.yaml:<name>``); ``name`` by default.
    ``priority``: who gets a free slot first (the longest chain ahead: :func:`flows.plan.chain_seconds`).
    """
    address = address or name
    state = current_state()
    log = get_run_logger()
    t_task = time.perf_counter()
    if recheck and up_to_date(address, Path(root)):
        log.info("stage %s: up to date after its upstream ran; not run", name)
        state.done(name)
        return {"stage": name, "ran": False}
    check_s = time.perf_counter() - t_task
    env = {**dvc_env(), **(threads or {})}
    if parent_run_id:
        env["CLAIMBENCH_PARENT_RUN_ID"] = parent_run_id
    with state.slot(priority, name):
        t0 = time.perf_counter()
        slot_wait_s = t0 - t_task - check_s
        log.info("stage %s: %s", name, cmd)
        returncode, tail = state.processes.run(name, cmd, root, env, lambda line: log.info("%s | %s", name, line))
        wall = time.perf_counter() - t0
    if state.processes.stopping.is_set():
        # stopped with the flow: whatever its exit status reads (the stop reaps the stage
        # processes, so this one may read 0), its outputs are not to be committed
        raise StageFailed(name, NOT_RETRYABLE_EXIT, "stopped: the flow is stopping")
    if returncode != 0:
        if killed_by(returncode):   # killed: the stage could not close its MLflow run
            reap(name, Path(root))
        raise StageFailed(name, returncode, tail)
    t1 = time.perf_counter()
    try:
        dvc_api(lambda repo: repo.commit(api_target(root, address), force=True), Path(root))
    except Exception as exc:  # noqa: BLE001 - named with the stage, not retried as the stage's failure
        raise RuntimeError(f"dvc commit {address} failed: {type(exc).__name__}: {exc}") from exc
    timings = {"check_s": check_s, "slot_wait_s": slot_wait_s, "wall_s": wall,
               "commit_s": time.perf_counter() - t1,
               "ended_at_s": time.time()}                # epoch seconds: the flow's timeline
    log.info("stage %s: %s", name, ", ".join(f"{k} {v:.1f}" for k, v in timings.items() if k != "ended_at_s"))
    state.done(name)
    return {"stage": name, "ran": True, **timings}


@dataclasses.dataclass
class Prepared:
    """What a flow run does before it submits stages: the workspace chosen and locked, what the
    remote has pulled, the plan made, the MLflow store and experiments created."""
    args: tuple
    root: Path
    lock: object
    stages: dict
    edges: dict
    targets: list[str] | None
    remote: str | None
    todo: list[str]


def _call_key(profile: str | None, targets: list[str] | None, gpu_only: bool, force: bool,
              pull: bool) -> tuple:
    """The arguments that shape a flow run's plan: a plan made for one key serves only that call."""
    return (profile, tuple(targets or ()), gpu_only, force, pull)


def prepare(profile: str | None, targets: list[str] | None, gpu_only: bool, force: bool,
            pull: bool) -> Prepared:
    """The flow run's first steps (see :class:`Prepared`). On failure the lock is released."""
    args = _call_key(profile, targets, gpu_only, force, pull)
    checkout = repo_root()
    root = workspace_path(checkout, profile)
    lock = workspace_lock(root)
    try:
        if root != checkout:
            prepare_workspace(checkout, root, profile)
        stages = load_stages(root)
        edges = upstream(stages)
        if gpu_only:
            targets = sorted(set(targets or []) | {n for n, s in stages.items() if s.gpu})
        remote = remote_name(root)
        if remote and pull:
            pull_inputs(root, [stages[t].address for t in targets or []], remote)
        todo, _ = plan(root, targets, force, stages)
        if todo:
            ensure_experiments(root, flow_studies(todo))
    except BaseException:
        lock.release()
        raise
    return Prepared(args, root, lock, stages, edges, targets, remote, todo)


# a plan made by main() while Prefect's ephemeral server starts, for the flow run it then starts
_PREPARED: contextvars.ContextVar[Prepared | None] = contextvars.ContextVar("claimbench_prepared", default=None)


def _take_prepared(key: tuple) -> Prepared | None:
    prep = _PREPARED.get()
    _PREPARED.set(None)
    if prep is not None and prep.args != key:        # made for another call: not this run's plan
        prep.lock.release()
        return None
    return prep


def start_ephemeral_api() -> threading.Thread | None:
    """Start Prefect's ephemeral API server in a thread when no API is configured, so that its
    start (a process importing Prefect's server: ~10 s on 2 cores) overlaps the flow's plan.
    The flow's client then finds it running (Prefect keeps one per process). A start that fails
    here is tried again, and reported, by the flow itself."""
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return None
    from prefect.server.api.server import SubprocessASGIServer

    def start() -> None:
        with contextlib.suppress(Exception):
            SubprocessASGIServer().start()

    thread = threading.Thread(target=start, name="prefect-ephemeral-start", daemon=True)
    thread.start()
    return thread


def _collect(futures: dict, edges: dict[str, set[str]]) -> tuple[list[dict], dict[str, str], list[str], bool]:
    """Wait for every stage task: (results of those that completed, {failed stage: why},
    stages not run because an upstream stage failed, whether every failure was a bad input)."""
    ran, failed, skipped, bad_input = [], {}, [], True
    for name, fut in futures.items():
        fut.wait()
        state = fut.state
        if state.is_completed():
            ran.append(fut.result())
        elif not state.is_final() or any(u in failed or u in skipped for u in edges[name]):
            skipped.append(name)           # never ran: a stage it waited for (the params check too) failed
        else:
            exc = state.result(raise_on_failure=False)
            failed[name] = str(exc).splitlines()[0] if str(exc) else state.message or "failed"
            bad_input &= isinstance(exc, StageFailed) and exc.returncode == NOT_RETRYABLE_EXIT
    return ran, failed, skipped, bad_input and bool(failed)


@flow(name="claimbench-pipeline", task_runner=ThreadPoolTaskRunner(max_workers=TASK_THREADS),
      log_prints=True)
def pipeline(profile: str | None = None, targets: list[str] | None = None,
             max_parallel: int | None = None, retries: int = 2, retry_delay_s: float = 10.0,
             gpu_slots: int | None = None, gpu_only: bool = False, force: bool = False,
             pull: bool = True, push: bool = True) -> dict:
    """Run the stale stages of dvc.yaml (optionally only ``targets`` and their upstream).

    ``profile``: the size profile (default: the one params.yaml names; another runs in its own
    workspace, :mod:`flows.workspace`). ``max_parallel``: stage processes at once (default: CPU
    cores); ``retries`` / ``retry_delay_s``: per stage, for failures a retry can fix;
    ``gpu_slots``: GPU stages at once on this machine (default: its CUDA devices; 0: no limit).
    ``gpu_only``: the targets are the GPU-marked stages (what a GPU node runs). ``force``: run the
    targets even when up to date. With a default DVC remote (``claimbench remote add``), ``pull``
    first fetches what the remote has of the stages to run and their inputs, so only what it lacks
    is computed, and ``push`` sends the outputs of the stages that ran.
    """
    key = _call_key(profile, targets, gpu_only, force, pull)
    prep = _take_prepared(key) or prepare(profile, targets, gpu_only, force, pull)
    root, lock, stages, edges = prep.root, prep.lock, prep.stages, prep.edges
    targets, remote, todo = prep.targets, prep.remote, prep.todo
    slots = max_parallel or os.cpu_count() or 1
    state = FlowRunState(PrioritySlots(slots))
    token = _enter_state(state)
    runs: FlowRuns | None = None
    try:
        print(f"stale stages: {todo or 'none'}")
        if not todo:
            return {"ran": [], "up_to_date": [], "failed": [], "skipped": [], "parent_run_id": None,
                    "pushed": [], "workspace": str(root)}

        slots_gpu = default_gpu_slots() if gpu_slots is None else gpu_slots
        gpu_tags = gpu_task_tags(slots_gpu)
        if any(stages[n].gpu for n in todo) and len(gpu_tags) > 1:
            ensure_gpu_limit(gpu_tags[1], slots_gpu)
        width = min(slots, branches(todo, edges))
        threads = thread_env(width)
        if threads:
            print(f"{width} independent branches on {os.cpu_count()} cores: "
                  f"{threads['OMP_NUM_THREADS']} thread(s) per stage process")

        runs = FlowRuns(root, todo, profile)
        ahead = chain_seconds(root, todo, edges, profile)
        for n in todo:
            state.slots.expect(n, ahead[n], edges[n] & set(todo))
        futures = {}
        for name in todo:
            s = stages[name]
            opts = {"retries": retries, "retry_delay_seconds": retry_delay_s}
            if s.gpu:
                opts["tags"] = gpu_tags
            futures[name] = run_stage.with_options(**opts).submit(
                name, s.cmd, str(root), runs.parent_of(name),
                recheck=bool(edges[name] & set(todo)) and not (force and name in (targets or stages)),
                threads=threads, address=s.address, priority=ahead[name],
                wait_for=[futures[u] for u in edges[name] | {CHECK_STAGE} if u in futures])
        ran, failed, skipped, bad_input = _collect(futures, edges)
        runs.close(ran, failed)
        if failed:
            message = "stages failed: " + "; ".join(failed.values())
            if skipped:
                message += f". Not run (an upstream stage failed): {', '.join(skipped)}"
            raise PipelineFailed(message, bad_input)
        done = [r for r in ran if r["ran"]]
        pushed = []
        if remote and push and done:
            pushed = push_outputs(root, [stages[r["stage"]].address for r in done], remote)
        runs.finish()
        return {"ran": [r["stage"] for r in done], "pushed": pushed,
                "up_to_date": [r["stage"] for r in ran if not r["ran"]], "failed": [], "skipped": [],
                "parent_run_id": runs.parent, "workspace": str(root),
                "stage_wall_s": {r["stage"]: r["wall_s"] for r in done},
                "stage_timings": {r["stage"]: {k: round(v, 3) for k, v in r.items() if k.endswith("_s")}
                                  for r in done}}
    except BaseException as exc:
        if isinstance(exc, PipelineFailed):
            if runs is not None:
                runs.fail(str(exc))
        else:                                   # stopped from outside: take the stages with it
            stopped, killed = state.processes.stop()
            for name in sorted(killed):         # killed: they could not close their MLflow runs
                reap(name, root)
            if stopped:
                print(f"flow stopped ({type(exc).__name__}); stopped {len(stopped)} stage process(es)")
            if runs is not None:
                runs.fail(f"the flow stopped: {type(exc).__name__}: {exc}")
        raise
    finally:
        _leave_state(token)
        lock.release()


def _exit_on_sigterm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise SystemExit(f"terminated by signal {signal.Signals(signum).name}")


def make_task_runner(spec: str):
    """``threads`` (default: stage processes started from threads), ``dask`` (a local Dask
    cluster of processes, on loopback) or ``dask://host:port`` (an existing Dask scheduler),
    through Prefect's own integration (prefect-dask)."""
    if spec == "threads":
        return ThreadPoolTaskRunner(max_workers=TASK_THREADS)
    if spec == "dask" or spec.startswith("dask://"):
        try:
            from prefect_dask import DaskTaskRunner
        except ImportError:
            raise SystemExit("--task-runner dask needs prefect-dask: pip install -e '.[dask]'") from None
        if spec == "dask":
            return DaskTaskRunner(cluster_kwargs={
                "n_workers": os.cpu_count() or 1, "threads_per_worker": 1, "processes": True,
                "host": "127.0.0.1", "dashboard_address": None})
        return DaskTaskRunner(address=f"tcp://{spec[len('dask://'):]}")
    raise SystemExit(f"--task-runner {spec!r}: use threads, dask or dask://host:port")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", choices=["smoke", "default", "paper"],
                    help="default: the one params.yaml names; another runs in .claimbench/profiles/<profile>/")
    ap.add_argument("--max-parallel", type=int, default=None,
                    help="stage processes at once (default: CPU cores)")
    ap.add_argument("--retries", type=int, default=2)
    ap.add_argument("--retry-delay", type=float, default=10.0, help="seconds between retries")
    ap.add_argument("--task-runner", default="threads",
                    help="threads (default) | dask (local cluster) | dask://host:port")
    ap.add_argument("--gpu-only", action="store_true", help="target the GPU-marked stages (a GPU node's share)")
    ap.add_argument("--force", action="store_true", help="run the targets even when up to date")
    ap.add_argument("--no-pull", action="store_true", help="do not pull from the default DVC remote first")
    ap.add_argument("--no-push", action="store_true", help="do not push what ran to the default DVC remote")
    ap.add_argument("targets", nargs="*")
    a = ap.parse_args(argv)
    # a task runner that cannot be made is refused before Prefect's server starts (seconds, not tens)
    try:
        runner = make_task_runner(a.task_runner) if a.task_runner != "threads" else None
    except SystemExit as exc:          # an unknown runner, or prefect-dask missing: fix the command
        print(f"pipeline failed: {exc}", file=sys.stderr)
        return NOT_RETRYABLE_EXIT
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    server = start_ephemeral_api()
    try:     # the plan, while Prefect's ephemeral server starts; the flow run takes it up
        prep = prepare(a.profile, a.targets or None, a.gpu_only, a.force, not a.no_pull)
    except ValueError as exc:          # an unknown stage, a broken params.yaml or dvc.yaml: fix and rerun
        print(f"pipeline failed: {exc}", file=sys.stderr)
        return NOT_RETRYABLE_EXIT
    except RuntimeError as exc:
        print(f"pipeline failed: {exc}", file=sys.stderr)
        return 1
    finally:
        if server is not None:
            server.join()
    token = _PREPARED.set(prep)
    flow_fn = pipeline if runner is None else pipeline.with_options(task_runner=runner)
    try:
        state = flow_fn(profile=a.profile, targets=a.targets or None, max_parallel=a.max_parallel,
                        retries=a.retries, retry_delay_s=a.retry_delay, gpu_only=a.gpu_only,
                        force=a.force, pull=not a.no_pull, push=not a.no_push, return_state=True)
    finally:
        leftover = _PREPARED.get()       # the flow run never started: free the workspace
        if leftover is not None:
            leftover.lock.release()
        _PREPARED.reset(token)
    if state.is_completed():
        print(json.dumps(state.result(), indent=2))
        return 0
    print(f"pipeline failed: {state.message}", file=sys.stderr)
    exc = state.result(raise_on_failure=False)
    return NOT_RETRYABLE_EXIT if getattr(exc, "bad_input", False) else 1


if __name__ == "__main__":
    # run the importable module's flow, not this __main__ copy: a distributed task runner
    # pickles tasks by reference to their module
    from flows.pipeline import main as _main

    sys.exit(_main())
