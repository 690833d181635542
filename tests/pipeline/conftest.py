"""Temp copies of the repository (what git would check out), each with its own git history:
``repo_copy`` with nothing built, ``built_copy`` with the whole smoke DAG already run (built once
a session by ``smoke_built`` and copied, so the tests that start from a finished pipeline do not
each pay for a full ``dvc repro``)."""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def sh(cmd: list[str] | str, cwd: Path, check: bool = True, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          shell=isinstance(cmd, str), **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def set_yaml_line(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) >= 1, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


@pytest.fixture
def repo_copy(tmp_path) -> Path:
    """The tracked (and untracked, not ignored) files of this checkout, as a fresh git repo on the
    smoke profile, with no DVC cache, no outputs and no MLflow store."""
    from stages.common.checkout import copy_checkout

    return copy_checkout(REPO, tmp_path / "repo", profile="smoke")


@pytest.fixture(scope="session")
def smoke_built(tmp_path_factory) -> tuple[Path, str]:
    """One ``dvc repro`` of the whole DAG on the smoke profile in a fresh copy: (its root, its
    output). Tests must not change it: they get copies from ``built_copy``."""
    from stages.common.checkout import copy_checkout

    root = copy_checkout(REPO, tmp_path_factory.mktemp("built") / "repo", profile="smoke")
    return root, sh(["dvc", "repro"], root, timeout=1800).stdout


def _repoint_store(db: Path, old: str, new: str) -> None:
    """MLflow's sqlite store keeps absolute artifact locations: point every one at the copy."""
    with sqlite3.connect(db) as con:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for _, col, ctype, *_ in con.execute(f'PRAGMA table_info("{table}")').fetchall():
                if ctype.upper().startswith(("VARCHAR", "TEXT")):
                    con.execute(f'UPDATE "{table}" SET "{col}" = replace("{col}", ?, ?) '
                                f'WHERE instr("{col}", ?) > 0', (old, new, old))


@pytest.fixture
def built_copy(smoke_built, tmp_path) -> Path:
    """A copy of the built smoke repo (outputs, dvc.lock, DVC cache and run cache, MLflow store
    with its runs), without DVC's machine-local state (``.dvc/tmp``)."""
    src, _ = smoke_built
    dst = tmp_path / "repo"
    shutil.copytree(src, dst, symlinks=True,
                    ignore=lambda d, names: ["tmp"] if Path(d) == src / ".dvc" else [])
    if (dst / "mlruns.db").exists():
        _repoint_store(dst / "mlruns.db", str(src), str(dst))
    return dst
