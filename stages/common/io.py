"""Atomic writes and DVC-compatible hashing.

Every stage writes its outputs through these helpers: the bytes go to a temporary
file (or folder) beside the target and are renamed into place only when complete, so a
stage killed mid-write leaves the previous output intact.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary file path beside ``target``; rename it onto ``target`` on success.

    On any exception (or a kill) the temporary file is removed / left as ``.tmp-*`` and
    ``target`` keeps its previous content.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".tmp-{target.name}-", suffix=suffix, dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_bytes(target: str | os.PathLike, data: bytes) -> Path:
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(target)


def write_text(target: str | os.PathLike, text: str) -> Path:
    return write_bytes(target, text.encode("utf-8"))


def write_json(target: str | os.PathLike, obj: Any) -> Path:
    return write_text(target, json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n")


def _json_default(obj: Any) -> Any:
    # numpy scalars and arrays without importing numpy at module import time
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


@contextlib.contextmanager
def atomic_dir(target: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``target``; swap it in on success.

    The previous folder is moved aside, the new one renamed in, then the old one deleted.
    A leftover ``.old-*`` folder from a kill between the two renames is restored by
    :func:`recover_dir` at the next write.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    recover_dir(target)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{target.name}-", dir=target.parent))
    try:
        yield tmp
        old = target.parent / f".old-{target.name}"
        if target.exists():
            os.replace(target, old)
        os.replace(tmp, target)
        if old.exists():
            shutil.rmtree(old)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def recover_dir(target: str | os.PathLike) -> None:
    """Restore ``target`` from ``.old-<name>`` if a previous swap was interrupted."""
    target = Path(target)
    old = target.parent / f".old-{target.name}"
    if old.exists():
        if target.exists():
            shutil.rmtree(old)
        else:
            os.replace(old, target)


def file_md5(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    h = hashlib.md5()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def dvc_md5(path: str | os.PathLike) -> str:
    """The md5 DVC 3 records for ``path`` in dvc.lock (files: plain md5; folders: ``<md5>.dir``)."""
    path = Path(path)
    if path.is_file():
        return file_md5(path)
    entries = sorted(
        ({"md5": file_md5(p), "relpath": p.relative_to(path).as_posix()}
         for p in path.rglob("*") if p.is_file()),
        key=lambda e: e["relpath"],
    )
    return hashlib.md5(json.dumps(entries, sort_keys=True).encode("utf-8")).hexdigest() + ".dir"


def stable_hash(obj: Any) -> str:
    """Short sha256 of a JSON-serialisable object (for params hashes)."""
    blob = json.dumps(obj, sort_keys=True, default=_json_default).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def write_npz(target: str | os.PathLike, arrays: dict[str, Any]) -> Path:
    """Write ``arrays`` as a compressed ``.npz`` (readable by ``np.load``), atomically and
    byte-for-byte reproducibly: ``np.savez`` stamps every member with the current time, so equal
    arrays would give a different file (and a new DVC hash) on every run; here the members are
    sorted and dated 1980-01-01."""
    import io as _io
    import zipfile

    import numpy as np

    with atomic_path(target, suffix=".npz") as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name in sorted(arrays):
                buf = _io.BytesIO()
                np.lib.format.write_array(buf, np.asarray(arrays[name]), allow_pickle=False)
                info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, buf.getvalue())
    return Path(target)
