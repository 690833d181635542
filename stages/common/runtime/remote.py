"""The DVC remote: where machines share the pipeline's data outputs (DVC's own ``dvc push`` / ``dvc pull``).

    claimbench remote add PATH|URL [--name NAME] [--local]    # the default remote
    claimbench remote                                          # which one is the default

A local directory (or a mounted network folder) works out of the box. ``s3://``, ``gs://`` and
``ssh://`` go through DVC's plugins, installed as extras: ``pip install -e '.[s3]'`` (or ``gs``,
``ssh``). The remote goes into ``.dvc/config`` (committed: every clone shares it) or, with
``--local``, into ``.dvc/config.local`` (this clone only: a path that exists on one machine).

Metrics files (``cache: false``) and ``dvc.lock`` travel through git; everything DVC caches
travels through the remote. The flow pulls before it plans (so a fresh clone runs only what the
remote lacks) and pushes what it ran (flows/pipeline.py).
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path
from urllib.parse import urlparse

# URL scheme -> (the DVC plugin's module, the pyproject extra that installs it)
PLUGINS = {"s3": ("dvc_s3", "s3"), "gs": ("dvc_gs", "gs"), "gcs": ("dvc_gs", "gs"),
           "ssh": ("dvc_ssh", "ssh")}


class RemoteError(ValueError):
    """A remote that cannot be used as given; the message says why and what to do."""


def _env() -> dict[str, str]:
    return {**os.environ, "DVC_NO_ANALYTICS": "1"}


def dvc(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["dvc", *args], cwd=root, env=_env(), capture_output=True, text=True)


def normalise(url: str, cwd: Path | None = None) -> str:
    """The URL DVC should store: a local path made absolute (the directory is created); a URL of a
    supported scheme as given, once its plugin is installed."""
    scheme = urlparse(url).scheme
    if scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt"):
        path = Path(urlparse(url).path if scheme == "file" else url).expanduser()
        path = (cwd or Path.cwd()) / path if not path.is_absolute() else path
        if path.exists() and not path.is_dir():
            raise RemoteError(f"remote {url}: {path} exists and is not a directory")
        path.mkdir(parents=True, exist_ok=True)
        return str(path.resolve())
    if scheme not in PLUGINS:
        raise RemoteError(f"remote {url}: scheme {scheme!r} is not supported here; use a local path, "
                          f"or one of {', '.join(sorted(s + '://' for s in PLUGINS))}")
    module, extra = PLUGINS[scheme]
    if importlib.util.find_spec(module) is None:
        raise RemoteError(f"remote {url}: DVC's {scheme} plugin is not installed; "
                          f"pip install -e '.[{extra}]'")
    return url


def add(root: Path, url: str, name: str = "storage", local: bool = False) -> str:
    """Make ``url`` the default remote named ``name`` (replacing one of that name); returns the
    URL as stored."""
    stored = normalise(url, root)
    res = dvc(root, "remote", "add", "--default", "--force", *(["--local"] if local else []), name, stored)
    if res.returncode != 0:
        raise RemoteError(f"dvc remote add failed: {res.stderr.strip()}")
    return stored


def default(root: Path) -> str | None:
    """The default remote's name, or None when none is configured."""
    res = dvc(root, "remote", "default")
    name = res.stdout.strip()
    return name if res.returncode == 0 and name else None


def url_of(root: Path, name: str) -> str | None:
    for line in dvc(root, "remote", "list").stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == name:
            return parts[1]
    return None
