"""A temp copy of the repository (what git would check out), with its own git history."""
from __future__ import annotations

import os
import shutil
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
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split()
    dst = tmp_path / "repo"
    for f in files:
        src = REPO / f
        if src.is_file() and not f.startswith("reports/") and f != "dvc.lock":
            (dst / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / f)
    set_yaml_line(dst / "params.yaml", "profile: default", "profile: smoke")
    sh(["git", "init", "-q"], dst)
    sh(["git", "-c", "user.email=t@t", "-c", "user.name=t", "add", "-A"], dst)
    sh(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "copy"], dst)
    return dst
