"""A fresh copy of this checkout (what a clean clone would hold), for tests and benchmarks.

Copies the tracked and untracked-but-not-ignored files (``git ls-files -co --exclude-standard``)
into a new git repository with one commit, without outputs, caches or MLflow stores, so a
pipeline run there starts from nothing and touches nothing here.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

SKIP_PREFIXES = ("reports/",)
SKIP_FILES = ("dvc.lock",)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=claimbench@localhost", "-c", "user.name=claimbench",
                           *args], cwd=root, check=True, capture_output=True, text=True).stdout


def copy_checkout(src: Path, dst: Path, profile: str | None = None, keep_outputs: bool = False) -> Path:
    """Copy ``src``'s files to ``dst`` (a new git repo); optionally set ``common.profile``.

    ``keep_outputs`` keeps ``reports/`` and ``dvc.lock`` (by default they are left out, so
    every stage is new to DVC).
    """
    files = _git(src, "ls-files", "-co", "--exclude-standard").split()
    for f in files:
        path = src / f
        if not path.is_file():
            continue
        if not keep_outputs and (f.startswith(SKIP_PREFIXES) or f in SKIP_FILES):
            continue
        (dst / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dst / f)
    if profile:
        params = dst / "params.yaml"
        text, n = re.subn(r"(?m)^(\s+profile:\s*)\w+", rf"\g<1>{profile}", params.read_text(), count=1)
        if n != 1:
            raise ValueError(f"{params}: no common.profile to set")
        params.write_text(text)
    _git(dst, "init", "-q")
    _git(dst, "add", "-A")
    _git(dst, "commit", "-qm", "copy of the checkout")
    return dst
