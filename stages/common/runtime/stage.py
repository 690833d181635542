"""What every stage does around its compute: validate params, seed, track, log outs.

A stage module looks like::

    def main() -> None:
        with stage("zipf_bigram", "train", ZipfParams) as ctx:
            p = ctx.params.train        # validated, active profile
            ...                         # compute, write outs atomically
            ctx.run.log_curve(...)      # metrics with steps

Params are validated (all profiles) before anything heavy is imported; a bad value exits
with status 2 and a message naming the key. Before the body runs:

* leftovers of a killed earlier run (``.tmp-<out>-*`` beside an out, an interrupted folder
  swap) are cleaned up;
* every dep that another stage produces is checked against the hash dvc.lock recorded for
  it, so a hand-edited or truncated input stops the stage (exit 2, naming the file and the
  stage that made it) instead of giving a silently wrong result.

When the body returns, the stage's metrics files, plots and outs (as declared in dvc.yaml)
are logged to MLflow, and a stage run as its process's program ends that process without the
interpreter's teardown (:func:`exit_without_teardown`); when it raises (or gets SIGTERM) the run
is marked FAILED with the error. Exit status 2 means bad input (params, data) that a retry cannot fix.

The run is kept by the tracking agent (:mod:`stages.common.runtime.tracking_agent`), a process shared
by the stages of a pipeline run, so the stage's own process never imports MLflow.
``CLAIMBENCH_TRACKING=inprocess`` logs from the stage's process instead; ``off`` runs a stage
without MLflow (benchmarks, debugging): ``ctx.run`` is then a
:class:`~stages.common.runtime.tracking.NullRun` that logs nothing.

This module is runtime (:mod:`stages.common.runtime`, never a DVC dep): editing it re-runs
no stage, so nothing here may shape an output; seeding is in :mod:`stages.common.seeding`.
"""
from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, TypeVar

from pydantic import BaseModel

from stages.common.runtime.params import CommonParams, ParamsError, load_study, repo_root
from stages.common.seeding import seed_everything

M = TypeVar("M", bound=BaseModel)


@dataclass
class StageContext:
    study: str
    step: str
    stage_name: str
    common: CommonParams
    params: BaseModel
    root: Path
    run: object  # tracking.StageRun, or tracking.NullRun when tracking is off
    shard: tuple[int, int] | None = None   # (index, count) in a matrix stage over seed shards


    @property
    def seed(self) -> int:
        """The first verdict seed: the one seed of a study not yet on the claims contract v2."""
        return self.common.seed

    @property
    def seeds(self) -> list[int]:
        """The profile's verdict seeds: a stage that draws anything runs every one of them and
        writes its figures per seed (``per_seed`` in its metrics file; see stages/common/seeds.py).
        In shard i of n of a matrix stage (``--shard i``), its share: every n-th seed from
        position i (stages/common/seeds.py, "seeds in shards")."""
        if self.shard is None:
            return self.common.verdict_seeds
        index, count = self.shard
        return self.common.verdict_seeds[index::count]

    def path(self, rel: str) -> Path:
        return self.root / rel


def shard_arg(argv: list[str]) -> int | None:
    """The ``--shard N`` a matrix stage's cmd passes (``--shard ${item.shard}``), or None."""
    if "--shard" not in argv:
        return None
    i = argv.index("--shard")
    try:
        return int(argv[i + 1])
    except (IndexError, ValueError):
        fail(f"--shard needs a shard number, got {argv[i + 1:i + 2] or 'nothing'}")


def fail(message: str, code: int = 2) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(code)


def tracking_mode() -> str:
    """``agent`` (default: the tracking agent logs the run), ``inprocess`` (this process logs
    it, importing MLflow) or ``off`` (``$CLAIMBENCH_TRACKING``)."""
    value = os.environ.get("CLAIMBENCH_TRACKING", "on").lower()
    if value in ("off", "0", "false", "no"):
        return "off"
    if value == "inprocess":
        return "inprocess"
    return "agent"


def tracking_enabled() -> bool:
    return tracking_mode() != "off"


def open_run(study: str, step: str, stage_name: str, profile: str, params: dict, root: Path,
             deps: list[str], outs: list[str], dep_hashes: dict[str, str]):
    """The stage's MLflow run: kept by the tracking agent, or by this process when
    ``CLAIMBENCH_TRACKING=inprocess`` (see :mod:`stages.common.runtime.tracking_agent`)."""
    if tracking_mode() == "inprocess":
        from stages.common.runtime.tracking import StageRun

        return StageRun(study, step, stage_name, profile, params, root=root, deps=deps, outs=outs,
                        dep_hashes=dep_hashes)
    import socket

    from stages.common.runtime.tracking import PARENT_ENV
    from stages.common.runtime.tracking_agent import RemoteRun, UnsafeSocketFolder

    try:
        return RemoteRun(root, study=study, step=step, stage_name=stage_name, profile=profile,
                         params=params, deps=deps, outs=outs, dep_hashes=dep_hashes,
                         host=socket.gethostname(), pid=os.getpid(), parent=os.environ.get(PARENT_ENV),
                         threads=os.environ.get("OMP_NUM_THREADS", "all cores"))
    except UnsafeSocketFolder as err:          # another user's folder: a clear error, exit 2
        fail(f"stage {stage_name}: {err}")


def clean_leftovers(root: Path, outs: list[str]) -> list[Path]:
    """Remove what a killed earlier run of this stage left beside its outs; return what went.

    ``atomic_path``/``atomic_dir`` write to ``.tmp-<name>-*`` beside the target and rename;
    a SIGKILL between the two leaves the temp behind. An interrupted folder swap
    (``.old-<name>``) is restored or dropped by :func:`recover_dir`.
    """
    from stages.common.io import recover_dir

    removed = []
    for rel in outs:
        target = root / rel
        recover_dir(target)
        if not target.parent.is_dir():
            continue
        for tmp in target.parent.glob(f".tmp-{target.name}-*"):
            if tmp.is_dir():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink(missing_ok=True)
            removed.append(tmp)
    return removed


def missing_inputs(root: Path, stage_name: str, deps: list[str], stages: dict) -> list[str]:
    """Deps that another stage of the DAG makes (one of its outs in dvc.yaml, or a file inside
    one) and that are not on disk, each with the command that makes it. Read from dvc.yaml, so it
    holds before any dvc.lock records the producer (a fresh checkout, a stage run by hand). A
    gate's outs (``meta: {gate: true}``: the params check's ``reports/params.ok``) only order the
    DAG and are not inputs; a dep folder holding several stages' outs is the consumer's to read."""
    from stages.common.runtime.dvcfile import covered

    problems = []
    for d in (Path(d).as_posix().rstrip("/") for d in deps):
        for s in stages.values():
            if s.name == stage_name or s.meta.get("gate"):
                continue
            if covered(d, s.outs):
                if not (root / d).exists():
                    problems.append(f"{d} (made by stage {s.name}) is missing; run `dvc repro {s.address}`")
                break
    return problems


def check_deps_against_lock(root: Path, stage_name: str, deps: list[str],
                            hashes: dict[str, str], stages: dict | None = None) -> list[str]:
    """Problems with the deps that other stages produce: each must exist and hash to what
    dvc.lock recorded for it. ``hashes`` maps each existing dep to its DVC hash. An out of
    another stage inside a folder dep (the ledger depends on ``reports/<study>``) is checked on
    its own. Deps no stage makes (code, shipped data) are DVC's to track.

    Only lock entries of stages that the DAG defines (``stages``, by default every dvc.yaml's)
    are trusted, and only for the outs that stage declares today: an entry left in a dvc.lock by
    a stage since removed or moved is ignored with a warning, never taken as a file's producer.
    The advice names commands that work: ``dvc repro`` and ``dvc commit`` of the stage that
    makes the file, and ``dvc checkout`` only when the cache holds the recorded version.
    """
    from stages.common.runtime.dvcfile import load_lock, load_stages
    from stages.common.io import dvc_md5

    stages = load_stages(root) if stages is None else stages

    def inside(path: str) -> bool:
        return any(path.startswith(d.rstrip("/") + "/") for d in deps)

    wanted = set(deps)
    problems = []
    for producer, entry in load_lock(root).items():
        if producer == stage_name:
            continue
        spec = stages.get(producer)
        if spec is None or spec.address != entry["_address"]:
            print(f"warning: dvc.lock has an entry for stage {entry['_address']}, which no "
                  f"dvc.yaml defines there; ignored (delete the entry from that dvc.lock)",
                  file=sys.stderr, flush=True)
            continue
        declared = {Path(o).as_posix().rstrip("/") for o in spec.outs}
        for out in entry.get("outs") or []:
            path, want = out.get("path"), out.get("md5")
            if not want or path not in declared or (path not in wanted and not inside(path)):
                continue
            got = hashes.get(path) if path in wanted else (
                dvc_md5(root / path) if (root / path).exists() else None)
            if got == want:
                continue
            fixes = [f"`dvc repro {spec.address}`"]
            if cached(root, want):
                fixes.append(f"`dvc checkout {path}`")
            if got is None:
                problems.append(f"{path} (made by stage {producer}) is missing; run "
                                f"{' or '.join(fixes)}")
            else:
                problems.append(
                    f"{path} differs from what stage {producer} recorded in dvc.lock "
                    f"(md5 {got}, recorded {want}): it was changed outside the pipeline "
                    f"(edited, truncated, or written by a stage run by hand). Remake it with "
                    f"{' or restore it with '.join(fixes)}; if the change is meant, "
                    f"record it with `dvc commit {spec.address}`")
    return problems


def cached(root: Path, md5: str) -> bool:
    """Whether DVC's local cache holds the object with this hash (DVC 3's layout), so that
    ``dvc checkout`` can restore it."""
    return (root / ".dvc" / "cache" / "files" / "md5" / md5[:2] / md5[2:]).is_file()


def keep_freed_memory() -> bool:
    """Tell glibc's malloc to keep freed memory for reuse instead of handing it back to the kernel:
    blocks up to 32 MB come from the heap (not a fresh ``mmap`` each time) and the heap is trimmed
    only past 512 MB free. torch frees and re-allocates its activation buffers at every step; by
    default each large one is a new mapping whose pages fault in again, zeroed by the kernel.
    Measured on 2 cores (rl_vla's SB3 PPO, 16k steps): 3.3 M minor page faults and 39.8 s of CPU
    (6.5 s of it system time) fell to 0.1 M and 29.4 s (0.4 s system), with the same results and
    the same peak memory (518 vs 523 MB). It changes where memory comes from, never a value
    computed. Returns False where the C library is not glibc (nothing is changed there)."""
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
        return bool(libc.mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024)
                    and libc.mallopt(M_TRIM_THRESHOLD, 512 * 1024 * 1024))
    except (OSError, AttributeError):
        return False


def owns_process() -> bool:
    """Whether this stage is the program its process runs: ``python -m stages.<study>...``, as
    a dvc.yaml cmd starts it. False for a stage body called from a test, a notebook or ``-c``."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return spec is not None and spec.name.startswith("stages.")


def exit_without_teardown() -> None:
    """End a stage's process that has finished its work, without the interpreter's teardown.

    After the last line of a stage, Python would free every module and object one by one before
    the process ends: 0.4-1.5 s for a stage that imported torch (measured on 2 cores: 1.0 s after
    ``import torch, torch._inductor.config, datasets, scipy.linalg, matplotlib.pyplot``, 0.05 s
    with this exit; autoopt's M1 train 1.4 s), paid by every stage of every run while DVC waits.
    The memory goes back to the system either way. What a normal exit does besides is done here,
    in its order: the atexit handlers run (multiprocessing's children are joined, MLflow's and
    logging's handlers flush, temp folders are removed), then stdout and stderr are flushed, and
    the process exits with status 0.

    Only for a stage that owns its process (:func:`owns_process`) and has succeeded: the wrapper
    calls it after ``done in``, which is why nothing may follow the ``with stage(...)`` block of a
    stage's ``main`` nor the ``main()`` call of its ``__main__`` guard (tests/common/runtime/
    test_stage_exit.py checks every stage for it). While a thread other than the main one is
    still running (a pool not shut down), it returns and the normal exit joins that thread.
    ``CLAIMBENCH_FULL_EXIT=1`` keeps the normal exit (a leak checker, a profiler that reports at
    teardown)."""
    import atexit
    import threading

    if os.environ.get("CLAIMBENCH_FULL_EXIT", "").lower() in ("1", "true", "yes"):
        return
    main = threading.main_thread()
    if any(t is not main and t.is_alive() and not t.daemon for t in threading.enumerate()):
        return
    atexit._run_exitfuncs()        # what a normal exit runs first (typeshed lists it in atexit)
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):   # closed, or replaced by something odd
            pass
    os._exit(0)


_sigterm_owner = os.getpid()   # whose SIGTERM _raise_on_sigterm raises in: who installed it (_set_sigterm)


def _raise_on_sigterm(signum, frame):  # noqa: ARG001 - signal handler signature
    """SIGTERM in the stage's process: SystemExit, so the stage unwinds and its run ends FAILED.

    A process forked from the stage (a pool's worker) inherits this handler until it installs one
    of its own, and raising is wrong there: Python swallows an exception raised where the handler
    may run at a worker's start (an at-fork hook, a finaliser; it prints "Exception ignored"), so a
    worker terminated before its pool's initializer ran went on to wait for work, and the pool's
    exit waited for it forever (seen: tests/common/test_forkpool.py, 2026-12-07). In any process
    but the one that installed it, the handler gives SIGTERM its default action back and sends it
    again: that process ends as if no handler had been installed."""
    if os.getpid() != _sigterm_owner:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    raise SystemExit(f"terminated by signal {signal.Signals(signum).name}")


def _set_sigterm(handler):
    """Install a SIGTERM handler (main thread only; elsewhere signals cannot be caught)."""
    global _sigterm_owner
    if handler is None:
        return None
    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:
        return None
    if handler is _raise_on_sigterm:
        _sigterm_owner = os.getpid()
    return previous


@contextlib.contextmanager
def stage(study: str, step: str, model: type[M], stage_name: str | None = None,
          track: bool = True) -> Iterator[StageContext]:
    shard = shard_arg(sys.argv[1:])
    stage_name = stage_name or f"{study}-{step}" + ("" if shard is None else f"@{shard}")
    root = repo_root()
    keep_freed_memory()
    if not sys.stderr.isatty():       # a log file or a pipe: progress bars as spaced lines
        from stages.common.runtime.logprogress import LogLines

        sys.stderr = LogLines(sys.stderr)
    try:
        common, params = load_study(study, model)
    except ParamsError as err:
        fail(str(err))
    from stages.common.runtime.dvcfile import load_stages

    try:
        stages = load_stages(root)
    except ValueError as err:                 # a broken dvc.yaml (ParamsError is a ValueError too)
        fail(str(err))
    spec = stages.get(stage_name)
    if spec is None:
        members = sorted(n for n, s in stages.items() if s.group == stage_name)
        if members:
            fail(f"{stage_name} is a matrix stage over seed shards: run one of {', '.join(members)} "
                 f"(`dvc repro <name>`, or its cmd with `--shard N`)")
        fail(f"dvc.yaml has no stage {stage_name!r}")
    shard_of = None
    if shard is not None:
        group = [s for s in stages.values() if spec.group and s.group == spec.group and s.file == spec.file]
        if list(spec.item) != ["shard"] or sorted(s.item["shard"] for s in group) != list(range(len(group))):
            fail(f"stage {stage_name}: --shard needs a matrix stage over `shard: [0, 1, ..., n-1]` "
                 f"(dvc.yaml has {spec.group or stage_name} with matrix item {spec.item})")
        shard_of = (shard, len(group))
    from stages.common.runtime.tracking import hash_deps

    t0 = time.perf_counter()
    for leftover in clean_leftovers(root, spec.outs):
        print(f"[{stage_name}] removed {leftover.relative_to(root)} (left by a killed earlier run)",
              flush=True)
    missing = missing_inputs(root, stage_name, spec.deps, stages)
    if missing:
        fail(f"stage {stage_name}: an input is missing:\n  " + "\n  ".join(missing))
    dep_hashes = hash_deps(root, spec.deps)
    problems = check_deps_against_lock(root, stage_name, spec.deps, dep_hashes, stages)
    if problems:
        fail(f"stage {stage_name}: its inputs are not what the pipeline made:\n  " +
             "\n  ".join(problems))
    seed_everything(common.seed)
    run = None
    print(f"[{stage_name}] profile={common.profile} verdict seeds={common.verdict_seeds}"
          + ("" if shard_of is None else f", shard {shard_of[0]} of {shard_of[1]}"), flush=True)
    # SIGTERM -> SystemExit -> the run is FAILED; kept until the run is closed, so a SIGTERM
    # while the outs are being logged fails the run too instead of leaving it RUNNING
    previous = _set_sigterm(_raise_on_sigterm)
    try:
        if track and tracking_enabled():
            run = open_run(study, step, stage_name, common.profile,
                           {"common": common.model_dump(), study: params.model_dump()},
                           root, spec.deps, spec.outs, dep_hashes)
        from stages.common.runtime.tracking import NullRun

        ctx = StageContext(study, step, stage_name, common, params, root, run or NullRun(), shard_of)
        setup_s = time.perf_counter() - t0          # checks, hashing deps, opening the run
        t_body = time.perf_counter()
        yield ctx
        compute_s = time.perf_counter() - t_body
        if run is not None:
            extra = {"stage.setup_s": setup_s, "stage.compute_s": compute_s}
            # device.py is loaded by the stages that cap their threads; it is looked up rather than
            # imported, as an import here would make it a code dep of every stage (depgraph.py)
            device = sys.modules.get("stages.common.device")
            if device is not None:
                extra["stage.cores_given"] = device.cores_given()
                if device.threads_applied() is not None:       # the stage capped its threads
                    extra["stage.threads"] = device.threads_applied()
            run.finish_stage(spec.metrics, spec.outs, extra)
            run.close()
    except BaseException as exc:
        if run is not None:
            _set_sigterm(signal.SIG_IGN)             # a second SIGTERM must not cut this short
            run.fail(exc)
        if isinstance(exc, ParamsError):             # a bad input found while computing (a claims file)
            fail(f"stage {stage_name}: {exc}")
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            # a full disk: retrying at once cannot help; every out is written beside its target and
            # renamed (stages.common.io), so none is left half-written
            fail(f"stage {stage_name}: no space left on the device writing {exc.filename or 'an output'} "
                 f"({exc.strerror}). Free some space (`df -h {root}`) and run the stage again.")
        raise
    finally:
        _set_sigterm(previous)
    print(f"[{stage_name}] done in {time.perf_counter() - t0:.1f}s", flush=True)
    if owns_process():
        exit_without_teardown()
