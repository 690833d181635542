"""Copies of the repository for the tests that run stages, and the one smoke build they share.

* :func:`smoke_build` — the whole DAG, smoke profile, ``dvc repro`` in a fresh copy: at most once
  a test session (fixture ``smoke_built`` in tests/conftest.py).
* :func:`copy_built` — a copy of that build (outputs, dvc.lock, DVC cache, MLflow store), for a
  test that changes things.
* :func:`rerun_study` — a study's determinism without running its chain twice from scratch: its
  stages run once more, with tracking off, in a copy of the build, and every out must come out
  as the build made it (wall-time fields of metrics files aside; outs a study names as
  volatile, such as a plot of timings, only have to exist). :class:`Reruns` runs the study
  tier's re-runs two at a time, each in its own copy of the build.
"""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from stages.common.runtime.checkout import comparable

REPO = Path(__file__).resolve().parents[1]


def sh(cmd: list[str] | str, cwd: Path, check: bool = True, **kw) -> subprocess.CompletedProcess:
    """Run a command with this interpreter's bin/ first on PATH (for ``dvc``); output captured."""
    env = kw.pop("env", None) or dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          shell=isinstance(cmd, str), **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def stage_names(dvc_output: str, cached: bool = False) -> list[str]:
    """The stages `dvc repro` ran, by name (DVC prints a study's stage as
    ``stages/<study>/dvc.yaml:<name>``); with ``cached``, also those it restored from its run
    cache (same cmd, deps and params ran before)."""
    out = []
    for line in dvc_output.splitlines():
        if line.startswith("Running stage") or (cached and "is cached - skipping run" in line):
            out.append(line.split("'")[1].split(":")[-1])
    return out


def stale(root: Path, *targets: str) -> set[str]:
    """Names of the stages `dvc status` reports changed."""
    return {k.split(":")[-1] for k in json.loads(sh(["dvc", "status", "--json", *targets], root).stdout or "{}")}


def set_line(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) >= 1, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def smoke_build(dst: Path, env: dict[str, str] | None = None) -> tuple[Path, str, float]:
    """``dvc repro`` of the whole DAG on the smoke profile in a fresh copy at ``dst``, in ``env``
    (default: this process's): (root, dvc's output, wall seconds)."""
    from stages.common.runtime.checkout import copy_checkout

    root = copy_checkout(REPO, dst, profile="smoke")
    t0 = time.perf_counter()
    out = sh(["dvc", "repro"], root, timeout=1800, env=env).stdout
    return root, out, time.perf_counter() - t0


def tree_digest(root: Path) -> dict[str, str]:
    """sha256 of every file under data/ and reports/ (the workspace outputs), by path."""
    import hashlib

    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for top in ("data", "reports") for p in sorted((root / top).rglob("*")) if p.is_file()}


def _repoint_store(db: Path, old: str, new: str) -> None:
    """MLflow's sqlite store keeps absolute artifact locations: point every one at the copy."""
    with sqlite3.connect(db) as con:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for _, col, ctype, *_ in con.execute(f'PRAGMA table_info("{table}")').fetchall():
                if ctype.upper().startswith(("VARCHAR", "TEXT")):
                    con.execute(f'UPDATE "{table}" SET "{col}" = replace("{col}", ?, ?) '
                                f'WHERE instr("{col}", ?) > 0', (old, new, old))


def copy_built(src: Path, dst: Path, with_store: bool = True) -> Path:
    """A copy of a built repo (outputs, dvc.lock, DVC cache and run cache, and unless
    ``with_store`` is false the MLflow store with its runs), without DVC's machine-local
    state (``.dvc/tmp``)."""
    skip_store = set() if with_store else {"mlruns.db", "mlartifacts"}

    def ignore(d: str, names: list[str]) -> list[str]:
        out = ["tmp"] if Path(d) == src / ".dvc" else []
        return out + ([n for n in names if n in skip_store] if Path(d) == src else [])

    shutil.copytree(src, dst, symlinks=True, ignore=ignore)
    if with_store and (dst / "mlruns.db").exists():
        _repoint_store(dst / "mlruns.db", str(src), str(dst))
    return dst


def _study_stages(root: Path, study: str) -> list:
    from stages.common.runtime.dvcfile import load_stages, upstream

    stages = load_stages(root)
    mine = {n for n in stages if n.split("-")[0] == study}
    if not mine:
        raise AssertionError(f"dvc.yaml has no stage of study {study!r}")
    edges = upstream(stages)
    order: list[str] = []

    def visit(n: str) -> None:
        if n in order:
            return
        for u in sorted(edges[n] & mine):
            visit(u)
        order.append(n)

    for n in sorted(mine):
        visit(n)
    return [stages[n] for n in order]


def _same(a: Path, b: Path, skip: tuple[str, ...] = ()) -> str | None:
    """None when ``a`` and ``b`` (files or folders) hold the same, else what differs. Files of a
    folder whose path relative to it is in ``skip`` only have to exist on both sides."""
    if a.is_dir():
        fa = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
        fb = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()) if b.is_dir() else []
        if fa != fb:
            return f"files differ: {sorted(set(map(str, fa)) ^ set(map(str, fb)))[:5]}"
        for rel in fa:
            if rel.as_posix() not in skip and comparable(a / rel) != comparable(b / rel):
                return f"{rel} differs"
        return None
    if not b.is_file():
        return "missing"
    return None if comparable(a) == comparable(b) else "content differs"


def rerun_stages(work: Path, study: str, env: dict[str, str] | None = None) -> None:
    """Run ``study``'s stages once more (``dvc repro --force --single-item`` in dvc.yaml order,
    tracking off) in ``work``, a copy of the build, in ``env`` (default: this process's; pass the
    build's, so that nothing a test left in the environment, a thread count, differs). Fails
    naming the stage that failed."""
    env = {**(os.environ if env is None else env), "CLAIMBENCH_TRACKING": "off"}
    for s in _study_stages(work, study):
        # through DVC, so that dvc.lock records a volatile out and the next stage's input check
        # (its deps against dvc.lock) accepts it
        proc = sh(["dvc", "repro", "--force", "--single-item", s.address], work, check=False, env=env,
                  timeout=900)
        assert proc.returncode == 0, f"re-run of {s.name} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


def compare_study(built: Path, work: Path, study: str, volatile: tuple[str, ...] = ()) -> dict:
    """Every out of ``study``'s stages in ``work`` (after :func:`rerun_stages`) must be as the
    build at ``built`` made it; returns the study's reports/<study>/*.json from the build.

    ``volatile``: outs, or files inside a folder out (paths relative to the root), whose bytes may
    differ run to run (a plot of wall times, an MLflow model's creation time); they only have to
    exist. JSON files are compared without wall-time fields
    (:func:`stages.common.runtime.checkout.strip_wall_times`)."""
    for s in _study_stages(work, study):
        for out in s.outs:
            if out in volatile:
                assert (work / out).exists(), f"{s.name}: {out} missing after the re-run"
                continue
            inside = tuple(v[len(out) + 1:] for v in volatile if v.startswith(out + "/"))
            diff = _same(built / out, work / out, inside)
            assert diff is None, (f"{s.name} is not deterministic: {out} {diff} between the smoke "
                                  f"build and a second run with the same params")
    return {p.stem: json.loads(p.read_text()) for p in sorted((built / "reports" / study).glob("*.json"))}


def rerun_study(built: Path, work: Path, study: str, volatile: tuple[str, ...] = ()) -> dict:
    """:func:`rerun_stages` then :func:`compare_study`: a study's determinism in one call."""
    rerun_stages(work, study)
    return compare_study(built, work, study, volatile)


class Reruns:
    """The study tier's re-runs, ``workers`` at a time: each worker thread re-runs studies one
    after another in its own copy of the build (one DVC repo each, so no lock is shared), taking
    the next study from one queue. On 2 cores two workers take about half the wall time of one.
    ``start(studies)`` queues them all; ``root(study)`` waits for that study's re-run and returns
    the copy it ran in (re-running it there first if it was never queued)."""

    def __init__(self, built: Path, base: Path, workers: int = 2, env: dict[str, str] | None = None):
        import threading
        from concurrent.futures import ThreadPoolExecutor

        self.built, self.base, self.local, self.env = built, base, threading.local(), env
        self.pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="rerun")
        self.futures: dict = {}
        self.lock = threading.Lock()
        self.copies = 0

    def _work(self) -> Path:
        if not hasattr(self.local, "root"):
            with self.lock:
                self.copies += 1
                n = self.copies
            self.local.root = copy_built(self.built, self.base / f"rerun{n}" / "repo", with_store=False)
        return self.local.root

    def _run(self, study: str) -> Path:
        root = self._work()
        rerun_stages(root, study, self.env)
        return root

    def start(self, studies) -> None:
        with self.lock:
            for st in studies:
                if st not in self.futures:
                    self.futures[st] = self.pool.submit(self._run, st)

    def root(self, study: str) -> Path:
        self.start([study])
        return self.futures[study].result()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
