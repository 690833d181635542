"""The claimbench pipeline as a Prefect flow, driven by the pipeline's dvc.yaml files (the root's and
each study's; never a second copy of the DAG).

    python -m flows.pipeline [--profile smoke] [target ...]

1. Take the workspace lock (one flow run at a time per checkout), ask DVC which stages are
   stale (``dvc status``) and add everything downstream of them.
2. Create the MLflow store and experiments once, then open a parent run for this flow run
   (experiment ``pipeline``) and, in each study's experiment, a run that stands for it there
   (the MLflow UI nests runs only within an experiment). From the command line with no
   Prefect server configured, step 1 and the store's creation run while Prefect's ephemeral
   server starts (~10 s on 2 cores), and the flow run takes their result up.
3. Submit one Prefect task per stale stage in dependency order; a task waits only for its
   own upstream stages, so independent stages run concurrently, each in its own process
   (the stage's ``cmd`` from dvc.yaml), at most ``max_parallel`` at a time. A stage is then
   recorded with ``dvc commit`` — one commit at a time, because DVC holds a repository
   lock — so dvc.lock and the cache are updated exactly as ``dvc repro`` would.
4. Afterwards ``dvc status`` is clean and ``dvc repro`` does nothing.

Failures: a stage that fails is retried (``retries``, ``retry_delay_s``) unless it exited
with status 2 (bad params or inputs: a retry cannot help). Stages downstream of a stage that
failed are not run; independent ones still are. The flow then fails with a message naming
every failed stage and why, and its MLflow runs are marked FAILED.

GPU stages (``meta: {gpu: true}`` in dvc.yaml) run with the Prefect tag ``gpu``; on a
machine with CUDA devices also with ``gpu@<host>``, whose tag concurrency limit
(``gpu_slots``, default: the number of devices) keeps them from sharing a device.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import heapq
import itertools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.task_runners import ThreadPoolTaskRunner

from stages.common.dvcfile import load_stages, upstream
from stages.common.params import repo_root
from stages.common.params_check import STAGE as PARAMS_STAGE

_DVC_LOCK = threading.Lock()   # `dvc commit` / `dvc status` take DVC's repo lock: one at a time
GPU_TAG = "gpu"
NOT_RETRYABLE_EXIT = 2         # a stage's "bad params / bad input" status (stages.common.stage)
WORKSPACE_LOCK = ".dvc/tmp/claimbench-flow.lock"
# Prefect's thread runner waits for a task's upstream inside the task's thread: with a thread for
# every stage (the whole DAG is ~120), a stage starts as soon as its upstream is done, and the
# stage slots may hold a free slot for it (PrioritySlots); with fewer, it would queue behind
# stages still waiting. Waiting threads cost no CPU; the stage processes are capped by the slots.
TASK_THREADS = 256


def killed_by(returncode: int) -> int | None:
    """The signal that ended a process, from its return code (negative from Python, 128+n
    from a shell), else None."""
    if returncode < 0:
        return -returncode
    if 128 < returncode < 128 + 65:
        return returncode - 128
    return None


class StageFailed(RuntimeError):
    """A stage's command failed (an exit status, or a signal that killed it)."""

    def __init__(self, stage: str, returncode: int, tail: str):
        self.stage, self.returncode, self.tail = stage, returncode, tail
        sig = killed_by(returncode)
        why = f"killed by signal {sig}" if sig else f"exit status {returncode}"
        last = tail.strip().splitlines()[-1] if tail.strip() else ""
        super().__init__(f"stage {stage} failed ({why}){': ' + last if last else ''}")


class PipelineFailed(RuntimeError):
    """Some stages failed; the message names them (and those skipped because of them)."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("DVC_NO_ANALYTICS", "1")
    env.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    env.setdefault("DO_NOT_TRACK", "true")
    env.pop("MLFLOW_RUN_ID", None)  # it would override the parent of every stage run
    return env


def _dvc(*args: str, root: Path, attempts: int = 6) -> subprocess.CompletedProcess:
    """Run a dvc command; waits for DVC's repo lock if someone else holds it briefly."""
    for i in range(attempts):
        with _DVC_LOCK:
            res = subprocess.run(["dvc", *args], cwd=root, env=_env(), capture_output=True, text=True)
        if res.returncode == 0 or "Unable to acquire lock" not in res.stderr or i == attempts - 1:
            return res
        time.sleep(0.5 * 2 ** i)
    return res


def _dvc_api(call, root: Path, attempts: int = 6):
    """``call(repo)`` on a DVC ``Repo`` opened in this process: DVC's own Python API, which its
    CLI wraps. Per stage of a flow it replaces a ``dvc commit`` and a ``dvc status`` process (each
    ~0.5-1.4 s of imports and start-up on 2 cores, serial under the lock) with ~0.05-0.25 s.
    One at a time (DVC's repo lock); retried while someone else holds that lock briefly."""
    from dvc.lock import LockError
    from dvc.repo import Repo

    for i in range(attempts):
        try:
            with _DVC_LOCK, Repo(str(root)) as repo:
                return call(repo)
        except LockError:
            if i == attempts - 1:
                raise
            time.sleep(0.5 * 2 ** i)


def set_profile(root: Path, profile: str) -> None:
    """Set ``common.profile`` in params.yaml (what ``dvc exp run -S common.profile=...`` applies)."""
    path = root / "params.yaml"
    text = path.read_text()
    new, n = re.subn(r"(?m)^(common:\s*\n(?:[ \t]+.*\n)*?[ \t]+profile:[ \t]*)([A-Za-z_]+)",
                     lambda m: m.group(1) + profile, text, count=1)
    if n != 1:
        raise ValueError("params.yaml: could not find common.profile to set")
    if new != text:
        path.write_text(new)


def stale_stages(root: Path, targets: list[str] | None = None) -> list[str]:
    """Stages to run, in dependency order: what dvc status reports, plus what lies downstream."""
    return plan(root, targets)[0]


def plan(root: Path, targets: list[str] | None = None, force: bool = False,
         stages: dict | None = None) -> tuple[list[str], set[str]]:
    """(stages that may need to run, in dependency order; those DVC reports changed now).

    A stage downstream of a changed one may turn out up to date once its upstream has run
    (the upstream made identical outputs); the flow asks DVC again before running it.
    ``force``: the targets (every stage, without targets) run even when up to date, as with
    ``dvc repro --force``; their upstream stages run only if stale. ``stages``: the pipeline's
    stages when the caller has loaded them already (:func:`load_stages`).
    """
    stages = stages if stages is not None else load_stages(root)
    edges = upstream(stages)
    if targets:
        unknown = sorted(set(targets) - set(stages))
        if unknown:
            raise ValueError(f"unknown stage(s) {unknown}; the pipeline has {sorted(stages)}")
    # DVC's status of the targets and what they depend on (every stage without targets)
    addresses = [stages[t].address for t in targets or []]
    try:
        changed = set(_dvc_api(lambda repo: repo.status(targets=addresses or None, with_deps=True), root))
    except Exception as exc:  # noqa: BLE001 - named as the flow's plan failing
        raise RuntimeError(f"dvc status failed: {type(exc).__name__}: {exc}") from exc
    changed = {c.split(":")[-1] for c in changed} & set(stages)
    if force:
        changed |= set(targets or stages)
    order = topological(stages, edges)
    stale: set[str] = set()
    for name in order:     # the params check's output is the same whenever it passes: it makes nothing stale
        if name in changed or (edges[name] - {CHECK_STAGE}) & stale:
            stale.add(name)
    if targets:
        wanted: set[str] = set()
        todo = list(targets)
        while todo:
            n = todo.pop()
            if n not in wanted:
                wanted.add(n)
                todo.extend(edges[n])
        stale &= wanted
    return [n for n in order if n in stale], changed


def topological(stages, edges) -> list[str]:
    order: list[str] = []
    seen: set[str] = set()

    def visit(n: str) -> None:
        if n in seen:
            return
        seen.add(n)
        for u in sorted(edges[n]):
            visit(u)
        order.append(n)

    for n in stages:
        visit(n)
    return order


def study_of(stage_name: str) -> str:
    return stage_name.split("-")[0]


# the stage that validates every study's params first (stages/common/params_check.py): upstream
# of every stage, it belongs to no study and logs no MLflow run
CHECK_STAGE = PARAMS_STAGE


THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


def branches(todo: list[str], edges: dict[str, set[str]]) -> int:
    """How many independent chains ``todo`` has: connected groups of stages, leaving out the
    stages that join several studies (the ledger), which run after all of them anyway."""
    def studies_above(n: str, seen: set[str]) -> set[str]:
        out = {study_of(n)} - {CHECK_STAGE}
        for u in edges[n]:
            if u not in seen:
                seen.add(u)
                out |= studies_above(u, seen)
        return out

    nodes = [n for n in todo if n != CHECK_STAGE and len(studies_above(n, set())) == 1]
    parent = {n: n for n in nodes}

    def find(n: str) -> str:
        while parent[n] != n:
            n = parent[n]
        return n

    for n in nodes:
        for u in edges[n]:
            if u in parent:
                parent[find(u)] = find(n)
    return max(1, len({find(n) for n in nodes}))


def thread_env(width: int, cores: int | None = None) -> dict[str, str]:
    """Threads per stage process when ``width`` stages run at once: the cores shared out, so
    concurrent stages do not oversubscribe them (each BLAS / torch pool would otherwise take
    every core). Measured on 2 cores: two default-profile zipf_bigram trains together took
    166 s with 2 threads each and 120 s with 1 each (97 s alone). Threads the user set win."""
    cores = cores or os.cpu_count() or 1
    if width <= 1 or any(v in os.environ for v in THREAD_VARS):
        return {}
    n = str(max(1, cores // width))
    return {v: n for v in THREAD_VARS}


def gpu_stages(root: Path | None = None) -> list[str]:
    """The stages dvc.yaml marks ``meta: {gpu: true}`` (the one place GPU stages are named)."""
    return [n for n, s in load_stages(root).items() if s.gpu]


def default_gpu_slots() -> int:
    """How many GPU stages may run at once on this machine: ``$CLAIMBENCH_GPU_SLOTS``, else
    one per CUDA device (``nvidia-smi -L``); 0 on a machine without one."""
    if os.environ.get("CLAIMBENCH_GPU_SLOTS", "").isdigit():
        return int(os.environ["CLAIMBENCH_GPU_SLOTS"])
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10)
        return sum(line.startswith("GPU ") for line in out.stdout.splitlines()) if out.returncode == 0 else 0
    except (OSError, subprocess.TimeoutExpired):
        return 0


def gpu_task_tags(slots: int) -> list[str]:
    """Prefect tags of a GPU stage: ``gpu`` (what it is), and where this machine has devices,
    ``gpu@<host>``, the tag whose concurrency limit (``slots``) keeps two stages off one device.
    The limit is per host, so GPU nodes do not hold each other back, and a CPU machine, where
    such stages run on the CPU, has none."""
    return [GPU_TAG] + ([f"{GPU_TAG}@{socket.gethostname()}"] if slots > 0 else [])


def ensure_gpu_limit(tag: str, slots: int) -> None:
    """Create or update the Prefect tag concurrency limit on ``tag`` to ``slots``."""
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as c:
        c.create_concurrency_limit(tag=tag, concurrency_limit=slots)


def _retryable(task, task_run, state) -> bool:  # noqa: ARG001 - Prefect's retry_condition_fn signature
    exc = state.data if isinstance(state.data, BaseException) else None
    if _stopping():
        return False
    return not (isinstance(exc, StageFailed) and exc.returncode == NOT_RETRYABLE_EXIT)


# The stage processes this flow process started (pid -> stage name), so that a flow that is
# stopped (SIGTERM, a cancellation from the Prefect UI, Ctrl-C) stops them too instead of
# leaving them running.
_CHILDREN: dict[int, str] = {}
_STOP = threading.Event()


def _stopping() -> bool:
    return _STOP.is_set()


def _reset_stop() -> None:
    _STOP.clear()


def _started(pid: int, stage_name: str) -> None:
    _CHILDREN[pid] = stage_name


def _ended(pid: int) -> None:
    _CHILDREN.pop(pid, None)


def stop_stages(root: Path, grace: float = 10.0) -> list[int]:
    """Stop every stage process this flow started (SIGTERM, then SIGKILL after ``grace``
    seconds); no new ones start. A stage that had to be killed could not close its MLflow
    run: its run is marked FAILED here, before the flow exits."""
    import psutil

    from flows.stack import stop_trees

    _STOP.set()
    roots, names = [], set()
    for pid, name in list(_CHILDREN.items()):
        try:
            roots.append(psutil.Process(pid))
            names.add(name)
        except psutil.NoSuchProcess:
            pass
    stopped, killed = stop_trees(roots, grace)
    if killed:
        for name in sorted(names):
            _reap(name, str(root))
    return stopped


class PrioritySlots:
    """At most ``n`` stage processes at once; a free slot goes to the stage with the highest
    priority (the longest estimated chain still ahead of it: see :func:`chain_seconds`) among
    those that can run, not to the one that asked first. Two cores and four chains of 70, 66, 64
    and 60 s finish near the balanced 130 s only if the long chains start first.

    "Can run" counts stages whose task has not asked yet: a stage :meth:`expect`-ed with its
    upstream stages is ready once they are all :meth:`done`, and a freed slot is held for it
    while its task starts (Prefect releases the tasks that waited on one upstream in no set
    order, and the first to ask would otherwise take the slot). A ready stage that has not asked
    within ``grace_s`` (it was skipped, or its flow is failing) no longer holds anything back."""

    def __init__(self, n: int, grace_s: float = 3.0):
        self.free, self.cond, self.waiting, self.order = n, threading.Condition(), [], itertools.count()
        self.grace_s = grace_s
        self.expected: dict[str, tuple[float, set[str]]] = {}   # not asked yet: priority, upstream
        self.finished: set[str] = set()
        self.ready_since: dict[str, float] = {}

    def expect(self, name: str, priority: float, upstream: set[str]) -> None:
        with self.cond:
            self.expected[name] = (priority, set(upstream))
            self._update_ready()

    def done(self, name: str) -> None:
        """``name`` finished (ran and was recorded, or found up to date): its downstream may run."""
        with self.cond:
            self.finished.add(name)
            self.expected.pop(name, None)
            self._update_ready()
            self.cond.notify_all()

    def _update_ready(self) -> None:
        now = time.monotonic()
        for n, (_, up) in self.expected.items():
            if n not in self.ready_since and up <= self.finished:
                self.ready_since[n] = now

    def _held_for(self) -> float:
        """The highest priority among ready stages that have not asked yet (within the grace)."""
        now = time.monotonic()
        held = [p for n, (p, _) in self.expected.items()
                if n in self.ready_since and now - self.ready_since[n] < self.grace_s]
        return max(held, default=float("-inf"))

    @contextlib.contextmanager
    def slot(self, priority: float = 0.0, name: str | None = None):
        with self.cond:
            if name is not None:
                self.expected.pop(name, None)      # it has asked (a retry asks again)
            me = (-priority, next(self.order))
            heapq.heappush(self.waiting, me)
            while not (self.free > 0 and self.waiting[0] == me and priority >= self._held_for()):
                self.cond.wait(timeout=0.5)        # the grace expires without a notification
            heapq.heappop(self.waiting)
            self.free -= 1
            self.cond.notify_all()            # the next in line may take another free slot
        try:
            yield
        finally:
            with self.cond:
                self.free += 1
                self.cond.notify_all()


_SLOTS: PrioritySlots | None = None   # at most max_parallel stage processes at once


def _set_stage_slots(n: int) -> None:
    global _SLOTS
    _SLOTS = PrioritySlots(n)


def chain_seconds(root: Path, todo: list[str], edges: dict[str, set[str]], profile: str | None) -> dict[str, float]:
    """For each stage to run, the estimated seconds of the longest chain from it to the end of
    ``todo`` (itself included): each stage's compute time as the ledger last recorded it for the
    profile (``stages/ledger/runs.json``), 1 s where it has none. The flow starts the stages with
    the longest chains first."""
    est: dict[str, float] = {}
    try:
        from stages.common.params import read_params_file

        prof = profile or read_params_file(root / "params.yaml")["common"]["profile"]
        studies = json.loads((root / "stages/ledger/runs.json").read_text()).get(prof, {}).get("studies", {})
        for study in studies.values():
            for name, run in study.get("stages", {}).items():
                if run.get("compute_s"):
                    est[name] = float(run["compute_s"])
    except (OSError, ValueError, KeyError, TypeError):
        pass                                       # no estimates: every stage counts 1 s
    below: dict[str, set[str]] = {n: set() for n in todo}
    for n in todo:
        for u in edges[n]:
            if u in below:
                below[u].add(n)
    out: dict[str, float] = {}
    for n in reversed(todo):                        # todo is in dependency order
        out[n] = est.get(n, 1.0) + max((out[d] for d in below[n]), default=0.0)
    return out


def _stage_slot(priority: float = 0.0, name: str | None = None):
    """The flow process's stage slots. A function, so tasks shipped to other processes (a
    distributed task runner pickles the task's code) refer to it instead of carrying a lock;
    there, each worker's own concurrency applies."""
    if _SLOTS is None:
        return contextlib.nullcontext()
    return _SLOTS.slot(priority, name)


def _expect_stages(stages: dict[str, tuple[float, set[str]]]) -> None:
    """Tell the slots which stages will ask, with their priority and upstream stages."""
    for name, (priority, upstream) in stages.items():
        _SLOTS.expect(name, priority, upstream)


def _stage_done(name: str) -> None:
    if _SLOTS is not None:
        _SLOTS.done(name)


def up_to_date(address: str, root: Path) -> bool:
    """True when DVC finds the stage (its DVC address, ``file:name`` outside the root dvc.yaml)
    up to date."""
    name = address.split(":")[-1]
    stale = _dvc_api(lambda repo: repo.status(targets=[address]), root)
    return name not in {k.split(":")[-1] for k in stale}


@task(task_run_name="{name}", retry_condition_fn=_retryable)
def run_stage(name: str, cmd: str, root: str, parent_run_id: str | None,
              recheck: bool = False, threads: dict[str, str] | None = None, address: str | None = None,
              priority: float = 0.0) -> dict:
    """Run one dvc.yaml stage's command in its own process, then record it with `dvc commit`.

    ``recheck``: an upstream stage ran first; if DVC now finds this one up to date (the
    upstream remade identical outputs), it is not run, as ``dvc repro`` would not run it.
    ``address``: how DVC names the stage (``stages/<study>/dvc.yaml:<name>``); ``name`` by default.
    ``priority``: who gets a free slot first (the longest chain ahead: :func:`chain_seconds`).
    """
    address = address or name
    log = get_run_logger()
    t_task = time.perf_counter()
    if recheck and up_to_date(address, Path(root)):
        log.info("stage %s: up to date after its upstream ran; not run", name)
        _stage_done(name)
        return {"stage": name, "ran": False}
    check_s = time.perf_counter() - t_task
    env = {**_env(), **(threads or {})}
    if parent_run_id:
        env["CLAIMBENCH_PARENT_RUN_ID"] = parent_run_id
    with _stage_slot(priority, name):
        if _stopping():
            raise StageFailed(name, NOT_RETRYABLE_EXIT, "not started: the flow is stopping")
        t0 = time.perf_counter()
        slot_wait_s = t0 - t_task - check_s
        log.info("stage %s: %s", name, cmd)
        proc = subprocess.Popen(cmd, shell=True, cwd=root, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        _started(proc.pid, name)
        try:
            stdout, stderr = proc.communicate()
        finally:
            _ended(proc.pid)
        wall = time.perf_counter() - t0
    if _stopping():
        # stopped with the flow: whatever its exit status reads (stop_stages reaps the stage
        # processes, so this one may read 0), its outputs are not to be committed
        raise StageFailed(name, NOT_RETRYABLE_EXIT, "stopped: the flow is stopping")
    for line in (stdout + stderr).splitlines()[-20:]:
        log.info("  %s | %s", name, line)
    if proc.returncode != 0:
        if killed_by(proc.returncode):   # killed: the stage could not close its MLflow run
            _reap(name, root)
        raise StageFailed(name, proc.returncode, stderr[-2000:])
    t1 = time.perf_counter()
    try:
        _dvc_api(lambda repo: repo.commit(address, force=True), Path(root))
    except Exception as exc:  # noqa: BLE001 - named with the stage, not retried as the stage's failure
        raise RuntimeError(f"dvc commit {address} failed: {type(exc).__name__}: {exc}") from exc
    timings = {"check_s": check_s, "slot_wait_s": slot_wait_s, "wall_s": wall,
               "commit_s": time.perf_counter() - t1,
               "ended_at_s": time.time()}                # epoch seconds: the flow's timeline
    log.info("stage %s: %s", name, ", ".join(f"{k} {v:.1f}" for k, v in timings.items() if k != "ended_at_s"))
    _stage_done(name)
    return {"stage": name, "ran": True, **timings}


def _reap(stage_name: str, root: str) -> None:
    from stages.common import tracking

    try:
        c = tracking.client(Path(root))
        exp = c.get_experiment_by_name(study_of(stage_name))
        if exp is not None:
            tracking.reap_orphans(c, exp.experiment_id)
    except Exception as exc:  # noqa: BLE001 - bookkeeping must not hide the stage's failure
        print(f"could not mark the MLflow run of {stage_name} FAILED: {exc}")


def _workspace_lock(root: Path):
    from filelock import FileLock, Timeout

    path = root / WORKSPACE_LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path), thread_local=False)   # taken before the flow run, released in it
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise RuntimeError(f"another pipeline flow is running in {root} (lock {WORKSPACE_LOCK}); "
                           "wait for it, or run this one in another clone") from None
    return lock


def flow_studies(todo: list[str]) -> list[str]:
    return sorted({study_of(n) for n in todo} - {CHECK_STAGE})


def ensure_experiments(root: Path, studies: list[str]) -> None:
    """Create the MLflow store and the experiments a flow run logs to, before stages fan out."""
    from stages.common import tracking

    for exp in [*studies, "pipeline"]:
        tracking.ensure_experiment(exp, root)


@dataclasses.dataclass
class Prepared:
    """What a flow run does before it submits stages: the workspace lock taken, the profile set,
    what the remote has pulled, the plan made, the MLflow store and experiments created."""
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
    root = repo_root()
    lock = _workspace_lock(root)
    try:
        if profile:
            set_profile(root, profile)
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


_PREPARED: list[Prepared] = []    # made by main() while Prefect's ephemeral server starts


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


class FlowRuns:
    """The MLflow side of one flow run: its run in experiment ``pipeline`` and, in each study's
    experiment, a run standing for it, under which that study's stage runs nest."""

    def __init__(self, root: Path, todo: list[str], profile: str | None):
        from stages.common import tracking

        self.root, self.tracking = root, tracking
        studies = flow_studies(todo)               # their experiments: made by prepare()
        tags = {"profile": profile or "", "stages": ",".join(todo), **_prefect_tags()}
        name = f"flow {tags.get('prefect.flow_run_name', time.strftime('%Y-%m-%d %H:%M'))}"
        self.parent = tracking.open_flow_run(name, tags, root)
        self.study_parent = {s: tracking.open_study_parent(s, self.parent, name, root) for s in studies}
        self.t0 = time.perf_counter()

    def close(self, ran: list[dict], failed: dict[str, str]) -> None:
        c = self.tracking.client(self.root)
        c.log_metric(self.parent, "flow.wall_s", time.perf_counter() - self.t0)
        c.log_metric(self.parent, "flow.stages_ran", sum(r["ran"] for r in ran))
        c.log_metric(self.parent, "flow.stages_failed", len(failed))
        if (self.root / "dvc.lock").exists():
            c.log_artifact(self.parent, str(self.root / "dvc.lock"))
        for s, rid in self.study_parent.items():
            bad = [why for n, why in failed.items() if study_of(n) == s]
            if bad:
                self.tracking.record_failure(c, rid, "; ".join(bad))
            else:
                c.set_terminated(rid, "FINISHED")

    def fail(self, message: str) -> None:
        c = self.tracking.client(self.root)
        for rid in [*self.study_parent.values(), self.parent]:
            if c.get_run(rid).info.status == "RUNNING":
                self.tracking.record_failure(c, rid, message)


def _collect(futures: dict, edges: dict[str, set[str]]) -> tuple[list[dict], dict[str, str], list[str]]:
    """Wait for every stage task: (results of those that completed, {failed stage: why},
    stages not run because an upstream stage failed)."""
    ran, failed, skipped = [], {}, []
    for name, fut in futures.items():
        fut.wait()
        state = fut.state
        if state.is_completed():
            ran.append(fut.result())
        elif any(u in failed or u in skipped for u in edges[name]):
            skipped.append(name)
        else:
            exc = state.result(raise_on_failure=False)
            failed[name] = str(exc).splitlines()[0] if str(exc) else state.message or "failed"
    return ran, failed, skipped


@flow(name="claimbench-pipeline", task_runner=ThreadPoolTaskRunner(max_workers=TASK_THREADS),
      log_prints=True)
def pipeline(profile: str | None = None, targets: list[str] | None = None,
             max_parallel: int | None = None, retries: int = 2, retry_delay_s: float = 10.0,
             gpu_slots: int | None = None, gpu_only: bool = False, force: bool = False,
             pull: bool = True, push: bool = True) -> dict:
    """Run the stale stages of dvc.yaml (optionally only ``targets`` and their upstream).

    ``max_parallel``: stage processes at once (default: CPU cores); ``retries`` /
    ``retry_delay_s``: per stage, for failures a retry can fix; ``gpu_slots``: GPU stages at
    once on this machine (default: its CUDA devices; 0: no limit). ``gpu_only``: the targets
    are the GPU-marked stages (what a GPU node runs). ``force``: run the targets even when up to
    date. With a default DVC remote (``claimbench remote add``), ``pull`` first fetches what the
    remote has of the stages to run and their inputs, so only what it lacks is computed, and
    ``push`` sends the outputs of the stages that ran.
    """
    prep = _PREPARED.pop() if _PREPARED else None
    if prep is not None and prep.args != _call_key(profile, targets, gpu_only, force, pull):      # made for another call: not this run's plan
        prep.lock.release()
        prep = None
    prep = prep or prepare(profile, targets, gpu_only, force, pull)
    root, lock, stages, edges = prep.root, prep.lock, prep.stages, prep.edges
    targets, remote, todo = prep.targets, prep.remote, prep.todo
    _reset_stop()
    runs: FlowRuns | None = None
    try:
        print(f"stale stages: {todo or 'none'}")
        if not todo:
            return {"ran": [], "up_to_date": [], "failed": [], "skipped": [], "parent_run_id": None,
                    "pushed": []}

        slots_gpu = default_gpu_slots() if gpu_slots is None else gpu_slots
        gpu_tags = gpu_task_tags(slots_gpu)
        if any(stages[n].gpu for n in todo) and len(gpu_tags) > 1:
            ensure_gpu_limit(gpu_tags[1], slots_gpu)
        slots = max_parallel or os.cpu_count() or 1
        _set_stage_slots(slots)
        width = min(slots, branches(todo, edges))
        threads = thread_env(width)
        if threads:
            print(f"{width} independent branches on {os.cpu_count()} cores: "
                  f"{threads['OMP_NUM_THREADS']} thread(s) per stage process")

        runs = FlowRuns(root, todo, profile)
        ahead = chain_seconds(root, todo, edges, profile)
        _expect_stages({n: (ahead[n], edges[n] & set(todo)) for n in todo})
        futures = {}
        for name in todo:
            s = stages[name]
            opts = {"retries": retries, "retry_delay_seconds": retry_delay_s}
            if s.gpu:
                opts["tags"] = gpu_tags
            futures[name] = run_stage.with_options(**opts).submit(
                name, s.cmd, str(root), runs.study_parent.get(study_of(name)),
                recheck=bool(edges[name] & set(todo)) and not (force and name in (targets or stages)),
                threads=threads, address=s.address, priority=ahead[name],
                wait_for=[futures[u] for u in edges[name] | {CHECK_STAGE} if u in futures])
        ran, failed, skipped = _collect(futures, edges)
        runs.close(ran, failed)
        if failed:
            message = "stages failed: " + "; ".join(failed.values())
            if skipped:
                message += f". Not run (an upstream stage failed): {', '.join(skipped)}"
            raise PipelineFailed(message)
        done = [r for r in ran if r["ran"]]
        pushed = []
        if remote and push and done:
            pushed = push_outputs(root, [stages[r["stage"]].address for r in done], remote)
        runs.tracking.client(root).set_terminated(runs.parent, "FINISHED")
        return {"ran": [r["stage"] for r in done], "pushed": pushed,
                "up_to_date": [r["stage"] for r in ran if not r["ran"]], "failed": [], "skipped": [],
                "parent_run_id": runs.parent,
                "stage_wall_s": {r["stage"]: r["wall_s"] for r in done},
                "stage_timings": {r["stage"]: {k: round(v, 3) for k, v in r.items() if k.endswith("_s")}
                                  for r in done}}
    except BaseException as exc:
        if isinstance(exc, PipelineFailed):
            if runs is not None:
                runs.fail(str(exc))
        else:                                   # stopped from outside: take the stages with it
            stopped = stop_stages(root)
            if stopped:
                print(f"flow stopped ({type(exc).__name__}); stopped {len(stopped)} stage process(es)")
            if runs is not None:
                runs.fail(f"the flow stopped: {type(exc).__name__}: {exc}")
        raise
    finally:
        lock.release()


def remote_name(root: Path) -> str | None:
    """The default DVC remote's name, or None (then the flow neither pulls nor pushes)."""
    from stages.common.remote import default

    return default(root)


def pull_inputs(root: Path, addresses: list[str], remote: str) -> None:
    """``dvc pull`` what the remote has: of the given stages and everything upstream of them, or
    of the whole DAG. Missing objects are not an error (the remote may hold part of a run);
    their stages are stale afterwards and run."""
    args = ["pull", "--allow-missing", "--remote", remote]
    if addresses:
        args += ["--with-deps", *addresses]
    t0 = time.perf_counter()
    res = _dvc(*args, root=root)
    if res.returncode != 0:
        raise RuntimeError(f"dvc {' '.join(args)} failed:\n{res.stderr.strip()}")
    summary = [line for line in res.stdout.splitlines() if line.strip()][-1:] or ["nothing to pull"]
    print(f"pulled from remote {remote} in {time.perf_counter() - t0:.1f} s: {summary[0].strip()}")


def push_outputs(root: Path, addresses: list[str], remote: str) -> list[str]:
    """``dvc push`` the outputs of the stages that ran; returns their addresses."""
    t0 = time.perf_counter()
    res = _dvc("push", "--remote", remote, *addresses, root=root)
    if res.returncode != 0:
        raise RuntimeError(f"dvc push to remote {remote} failed (the stages ran and are committed "
                           f"here; `dvc push` again to share them):\n{res.stderr.strip()}")
    summary = [line for line in res.stdout.splitlines() if line.strip()][-1:] or [""]
    print(f"pushed {len(addresses)} stage(s) to remote {remote} in {time.perf_counter() - t0:.1f} s: "
          f"{summary[0].strip()}")
    return addresses


def _prefect_tags() -> dict[str, str]:
    """The Prefect flow run (and deployment) this MLflow run belongs to."""
    try:
        from prefect.runtime import deployment, flow_run

        tags = {"prefect.flow_run_id": str(flow_run.id or ""),
                "prefect.flow_run_name": str(flow_run.name or "")}
        if deployment.name:
            tags["prefect.deployment"] = str(deployment.name)
        return {k: v for k, v in tags.items() if v}
    except Exception:  # noqa: BLE001 - tags are a convenience
        return {}


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
    ap.add_argument("--profile", choices=["smoke", "default", "paper"])
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
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    server = start_ephemeral_api()
    try:     # the plan, while Prefect's ephemeral server starts; the flow run takes it up
        _PREPARED.append(prepare(a.profile, a.targets or None, a.gpu_only, a.force, not a.no_pull))
    except (RuntimeError, ValueError) as exc:
        print(f"pipeline failed: {exc}", file=sys.stderr)
        return 1
    finally:
        if server is not None:
            server.join()
    flow_fn = pipeline
    if a.task_runner != "threads":
        flow_fn = pipeline.with_options(task_runner=make_task_runner(a.task_runner))
    try:
        state = flow_fn(profile=a.profile, targets=a.targets or None, max_parallel=a.max_parallel,
                        retries=a.retries, retry_delay_s=a.retry_delay, gpu_only=a.gpu_only,
                        force=a.force, pull=not a.no_pull, push=not a.no_push, return_state=True)
    finally:
        while _PREPARED:                # the flow run never started: free the workspace
            _PREPARED.pop().lock.release()
    if state.is_completed():
        print(json.dumps(state.result(), indent=2))
        return 0
    print(f"pipeline failed: {state.message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    # run the importable module's flow, not this __main__ copy: a distributed task runner
    # pickles tasks by reference to their module
    from flows.pipeline import main as _main

    sys.exit(_main())
