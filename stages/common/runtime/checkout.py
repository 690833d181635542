"""A fresh copy of this checkout (what a clean clone would hold), for tests and benchmarks.

Copies the tracked and untracked-but-not-ignored files (``git ls-files -co --exclude-standard``)
into a new git repository with one commit, without outputs, caches or MLflow stores, so a
pipeline run there starts from nothing and touches nothing here.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

SKIP_PREFIXES = ("reports/",)
SKIP_FILES = ("dvc.lock",)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=claimbench@localhost", "-c", "user.name=claimbench",
                           *args], cwd=root, check=True, capture_output=True, text=True).stdout


def listed_files(root: Path) -> list[str]:
    """The checkout's files as git sees them (relative paths): tracked, and new ones it does not
    ignore; folders and removed files left out."""
    out = git(root, "ls-files", "-co", "--exclude-standard", "-z")
    return [f for f in out.split("\0") if f and (root / f).is_file()]


def copy_checkout(src: Path, dst: Path, profile: str | None = None, keep_outputs: bool = False,
                  only: list[str] | None = None) -> Path:
    """Copy ``src``'s files to ``dst`` (a new git repo); optionally set ``common.profile``.

    ``keep_outputs`` keeps ``reports/`` and the ``dvc.lock`` files (by default they are left out,
    so every stage is new to DVC). ``only`` keeps in dvc.yaml just the stages of these studies
    (and ``corpora`` when named) and the ledger, which then depends on them alone: a small
    pipeline for the tests of the machinery around stages.
    """
    for f in listed_files(src):
        path = src / f
        if not keep_outputs and (f.startswith(SKIP_PREFIXES) or Path(f).name in SKIP_FILES):
            continue
        (dst / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dst / f)
    if profile:
        from stages.common.runtime.params import set_profile

        set_profile(dst / "params.yaml", profile)
    if only is not None:
        keep_studies(dst, only)
    git(dst, "init", "-q")
    git(dst, "add", "-A")
    git(dst, "commit", "-qm", "copy of the checkout")
    return dst


WALL_TIME_KEYS = ("seconds",)
WALL_TIME_SUFFIXES = ("_s", "_seconds", "_ms")


WALL_TIME_PREFIXES = ("seconds_", "ms_per_")


def is_wall_time(key: str) -> bool:
    """True for a metrics key that measures elapsed time (or a ratio of times): ``seconds``,
    ``seconds_*``, ``ms_per_*``, ``*_s``, ``*_seconds``, ``*_ms``, ``*speedup*``. Such figures
    differ run to run; every other figure of a stage must come out the same for the same params."""
    return (key in WALL_TIME_KEYS or key.startswith(WALL_TIME_PREFIXES) or key.endswith(WALL_TIME_SUFFIXES)
            or "speedup" in key)


def strip_wall_times(obj):
    """``obj`` (parsed JSON) without its wall-time fields (:func:`is_wall_time`), at any depth."""
    if isinstance(obj, dict):
        return {k: strip_wall_times(v) for k, v in obj.items() if not is_wall_time(k)}
    if isinstance(obj, list):
        return [strip_wall_times(v) for v in obj]
    return obj


def comparable(path: Path):
    """What must come out the same when a stage runs again: a JSON file's content, a CSV's rows,
    without wall-time fields or columns (:func:`is_wall_time`); any other file's bytes."""
    import json

    if path.suffix == ".json":
        return strip_wall_times(json.loads(path.read_text()))
    if path.suffix == ".csv":
        import csv

        rows = list(csv.reader(path.read_text().splitlines()))
        keep = [i for i, name in enumerate(rows[0] if rows else []) if not is_wall_time(name)]
        return [[row[i] for i in keep if i < len(row)] for row in rows]
    return path.read_bytes()


def keep_studies(root: Path, studies: list[str]) -> None:
    """Keep in ``root``'s pipeline only the stages of ``studies`` (``corpora`` too when named),
    the params check (it validates every study's params, a second's work) and the ledger: the other studies' dvc.yaml files go (their code stays), and their lines
    leave the ledger's deps. The root dvc.yaml is edited round-trip (ruamel), so it keeps its layout and comments."""
    from stages.common.runtime.dvcfile import pipeline_files

    nested = [p for p in pipeline_files(root) if p != root / "dvc.yaml"]
    have = {p.parent.name for p in nested}
    unknown = sorted(set(studies) - have)
    if unknown:
        raise ValueError(f"the pipeline has no stages of {', '.join(unknown)}")
    for path in nested:
        if path.parent.name not in studies:
            path.unlink()
            path.with_name("dvc.lock").unlink(missing_ok=True)

    def kept(dep: str) -> bool:       # code, or the claims and reports of a kept study
        per_study = dep.endswith("/claims.yaml") or dep.startswith("reports/")
        return not per_study or dep.split("/")[1] in studies

    from stages.common.runtime.params import dump_yaml, round_trip_yaml

    data = round_trip_yaml().load((root / "dvc.yaml").read_text())
    ledger = data["stages"]["ledger"]
    ledger["deps"][:] = [d for d in ledger["deps"] if kept(d)]
    (root / "dvc.yaml").write_text(dump_yaml(data))
