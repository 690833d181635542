"""A temp copy of the repository (what git would check out), with its own git history."""
from __future__ import annotations

import os
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
