"""How much of the machine a flow run's stages get: stage slots (at most so many stage
processes at once, the longest chain first), threads per stage process, and GPU tags and limits."""
from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import socket
import subprocess
import threading
import time

GPU_TAG = "gpu"
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


class PrioritySlots:
    """At most ``n`` stage processes at once; a free slot goes to the stage with the highest
    priority (the longest estimated chain still ahead of it: see :func:`flows.plan.chain_seconds`)
    among those that can run, not to the one that asked first. Two cores and four chains of 70,
    66, 64 and 60 s finish near the balanced 130 s only if the long chains start first.

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


def gpu_stages(stages: dict) -> list[str]:
    """The stages dvc.yaml marks ``meta: {gpu: true}`` (the one place GPU stages are named)."""
    return [n for n, s in stages.items() if s.gpu]


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
