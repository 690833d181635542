"""Where a flow run works, so that choosing a profile never edits a tracked file.

On the profile params.yaml names (``common.profile``), the flow runs in the checkout, as
``dvc repro`` does. On another profile (``--profile paper`` from a checkout set to ``default``;
a scheduled deployment's profile) it runs in a workspace of its own,
``.claimbench/profiles/<profile>/`` (ignored by git):

* the checkout's code and params (the files git lists, tracked or new), copied in before every
  run, with ``common.profile`` set in that copy of params.yaml (``stages.common.runtime.params.set_profile``:
  comments and layout kept);
* its own outputs and dvc.lock files (DVC's outs are never copied in or out), so each profile's
  outputs stay up to date side by side and a second run on a profile runs only what changed;
* the checkout's DVC cache (what one workspace made, another restores instead of computing) and
  MLflow store (every run in one place, tagged with its profile).

The checkout's ``git status`` is the same before and after. The workspace is a DVC repository
without git (``core.no_scm``): it lies inside the checkout's git tree, where git ignores it.
"""
from __future__ import annotations

import filecmp
import os
import shutil
from pathlib import Path

WORKSPACES = Path(".claimbench/profiles")
SYNCED = ".claimbench-synced"          # in a workspace: the files last copied from the checkout


def active_profile(root: Path) -> str:
    """The profile params.yaml names."""
    from stages.common.runtime.params import read_params_file

    return read_params_file(root / "params.yaml")["common"]["profile"]


def _outputs(root: Path) -> list[str]:
    """What DVC makes in a workspace: every stage's outs and every dvc.lock."""
    from stages.common.runtime.dvcfile import load_stages, pipeline_files

    outs = [o for s in load_stages(root).values() for o in s.outs]
    locks = [p.with_name("dvc.lock").relative_to(root).as_posix() for p in pipeline_files(root)]
    return outs + locks


def sync(root: Path, ws: Path) -> int:
    """Copy the checkout's code and params into ``ws`` (not DVC's outputs or locks); remove what
    an earlier sync copied that the checkout no longer has. Returns how many files changed."""
    from stages.common.runtime.checkout import listed_files
    from stages.common.runtime.dvcfile import covered

    outputs = _outputs(root)
    files = [f for f in listed_files(root) if not covered(f, outputs)]
    ws.mkdir(parents=True, exist_ok=True)
    changed = 0
    for f in files:
        src, dst = root / f, ws / f
        if dst.is_file() and filecmp.cmp(src, dst, shallow=True):
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        changed += 1
    manifest = ws / SYNCED
    before = set(manifest.read_text().splitlines()) if manifest.is_file() else set()
    for gone in sorted(before - set(files)):
        (ws / gone).unlink(missing_ok=True)
        changed += 1
    manifest.write_text("\n".join(sorted(files)) + "\n")
    return changed


def _configure_dvc(root: Path, ws: Path) -> None:
    """The workspace's DVC: no git (it lies in the checkout's git tree, ignored there), and the
    checkout's cache."""
    cache = (root / ".dvc" / "cache").resolve()
    (ws / ".dvc").mkdir(exist_ok=True)
    (ws / ".dvc" / "config.local").write_text(f"[core]\n    no_scm = true\n[cache]\n    dir = {cache}\n")


def workspace_path(root: Path, profile: str | None) -> Path:
    """Where a flow run on ``profile`` works: ``root`` itself when ``profile`` is None or the one
    params.yaml names, else its workspace (:func:`prepare_workspace` makes it ready)."""
    if profile is None or profile == active_profile(root):
        return root
    return root / WORKSPACES / profile


def prepare_workspace(root: Path, ws: Path, profile: str) -> None:
    """Bring a profile's workspace up to date with the checkout's code and params, and point this
    process's environment (which the stage processes inherit) at the checkout's MLflow store."""
    changed = sync(root, ws)
    from stages.common.runtime.params import set_profile

    set_profile(ws / "params.yaml", profile)
    _configure_dvc(root, ws)
    from stages.common.runtime import tracking

    os.environ.setdefault("MLFLOW_TRACKING_URI", tracking.tracking_uri(root))
    artifacts = tracking.artifact_root(root)
    if artifacts:
        os.environ.setdefault("CLAIMBENCH_ARTIFACT_ROOT", artifacts)
    print(f"profile {profile}: working in {ws.relative_to(root)} ({changed} file(s) brought up to date "
          f"from the checkout; its outputs and dvc.lock files are its own; the checkout is untouched)")
