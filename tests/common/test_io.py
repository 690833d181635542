"""stages.common.io: atomic writes (including a real SIGKILL) and DVC-compatible md5s."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from stages.common.io import (atomic_dir, atomic_path, dvc_md5, file_md5, recover_dir,
                              stable_hash, write_json, write_text)

REPO = Path(__file__).resolve().parents[2]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith((".tmp-", ".old-")))


# --------------------------------------------------------------------------------------
# atomic writes
# --------------------------------------------------------------------------------------
def test_write_json_content_and_no_leftovers(tmp_path):
    """write_json writes sorted, indented JSON that parses back; numpy values become lists/numbers."""
    import numpy as np

    target = tmp_path / "sub" / "m.json"
    write_json(target, {"b": np.float64(1.5), "a": np.arange(3), "p": Path("x/y")})
    assert json.loads(target.read_text()) == {"a": [0, 1, 2], "b": 1.5, "p": "x/y"}
    assert target.read_text().startswith('{\n  "a"') and target.read_text().endswith("}\n")
    assert _leftovers(target.parent) == []


def test_write_json_rejects_unserialisable(tmp_path):
    """An object JSON cannot encode raises TypeError and leaves no file behind."""
    target = tmp_path / "m.json"
    with pytest.raises(TypeError):
        write_json(target, {"x": object()})
    assert not target.exists() and _leftovers(tmp_path) == []


def test_write_text_replaces_content(tmp_path):
    """write_text overwrites an existing file with exactly the new UTF-8 text."""
    target = tmp_path / "t.txt"
    target.write_text("old")
    write_text(target, "néw\n")
    assert target.read_bytes() == "néw\n".encode("utf-8")
    assert _leftovers(tmp_path) == []


def test_atomic_dir_swaps_folder(tmp_path):
    """atomic_dir replaces the whole folder: new files in, old files gone, no .tmp/.old left."""
    target = tmp_path / "out"
    target.mkdir()
    (target / "old.txt").write_text("old")
    with atomic_dir(target) as tmp:
        assert tmp != target and tmp.parent == tmp_path and list(tmp.iterdir()) == []
        (tmp / "new.txt").write_text("new")
        assert (target / "old.txt").exists()  # not swapped until the block ends
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]
    assert _leftovers(tmp_path) == []


def test_atomic_path_exception_keeps_old_content(tmp_path):
    """An exception inside atomic_path leaves the target's previous bytes and no temp file."""
    target = tmp_path / "f.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"half-written")
            raise RuntimeError("boom")
    assert target.read_bytes() == b"old"
    assert _leftovers(tmp_path) == []


def test_atomic_dir_exception_keeps_old_folder(tmp_path):
    """An exception inside atomic_dir leaves the previous folder intact and no temp folder."""
    target = tmp_path / "out"
    target.mkdir()
    (target / "a.txt").write_text("A")
    with pytest.raises(KeyboardInterrupt):
        with atomic_dir(target) as tmp:
            (tmp / "b.txt").write_text("B")
            raise KeyboardInterrupt
    assert sorted(p.name for p in target.iterdir()) == ["a.txt"]
    assert (target / "a.txt").read_text() == "A"
    assert _leftovers(tmp_path) == []


def test_recover_dir_restores_interrupted_swap(tmp_path):
    """A kill between the two renames leaves only .old-<name>; the next atomic_dir restores then replaces it."""
    old = tmp_path / ".old-out"
    old.mkdir()
    (old / "a.txt").write_text("A")
    recover_dir(tmp_path / "out")
    assert (tmp_path / "out" / "a.txt").read_text() == "A" and not old.exists()
    old.mkdir()  # both present: the swap had completed, the stale .old is dropped
    recover_dir(tmp_path / "out")
    assert not old.exists() and (tmp_path / "out" / "a.txt").exists()


KILL_SCRIPT = textwrap.dedent("""
    import sys, time
    from stages.common.io import atomic_path
    target = sys.argv[1]
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as fh:
            for i in range(10_000):
                fh.write(b"N" * 65536)
                fh.flush()
                if i == 2:
                    print("writing", flush=True)
                time.sleep(0.01)
""")


def test_sigkill_mid_write_keeps_old_content(tmp_path, sub_env, python_exe):
    """A writer SIGKILLed inside atomic_path leaves the target's old content (a .tmp-* file may remain)."""
    target = tmp_path / "big.bin"
    old = b"old content\n" * 100
    target.write_bytes(old)
    proc = subprocess.Popen([python_exe, "-c", KILL_SCRIPT, str(target)], cwd=REPO,
                            env=sub_env(PYTHONPATH=str(REPO)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        line = proc.stdout.readline()
        assert line.strip() == b"writing", proc.stderr.read()
        time.sleep(0.1)
        tmp_files = [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-big.bin-")]
        assert len(tmp_files) == 1 and tmp_files[0].stat().st_size >= 3 * 65536
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert target.read_bytes() == old


# --------------------------------------------------------------------------------------
# hashes
# --------------------------------------------------------------------------------------
def test_dvc_md5_of_file_is_plain_md5(tmp_path):
    """For a file, dvc_md5 == hashlib.md5 of the bytes (also across file_md5's chunk boundary)."""
    f = tmp_path / "x.bin"
    data = os.urandom(3 * 1024 + 7)
    f.write_bytes(data)
    assert dvc_md5(f) == hashlib.md5(data).hexdigest()
    assert file_md5(f, chunk=1000) == hashlib.md5(data).hexdigest()


def _make_tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return root


TREES = {
    "plain": {"a.txt": b"a\n", "b/c.txt": b"c\n", "b/d/e.bin": bytes(range(256))},
    # '-' (0x2d) and '.' (0x2e) sort before '/' (0x2f): relpath order differs from path-part order
    "tricky": {"a-b/x": b"1", "a/b": b"2", "a.txt": b"3", "a/c/d": b"4", ".hidden": b"5",
               "Z": b"6", "ünï": b"7"},
    "hf": None,  # a Hugging Face dataset saved to disk
}


def test_dvc_md5_of_folders_matches_dvc(tmp_path, sub_env):
    """For folders, dvc_md5 equals the md5 that `dvc add` writes into the .dvc file."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for name, files in TREES.items():
        if files is None:
            import datasets

            datasets.Dataset.from_dict({"x": [1, 2, 3], "s": ["a", "b", "c"]}).save_to_disk(
                str(repo / name))
        else:
            _make_tree(repo / name, files)
    env = sub_env(DVC_SITE_CACHE_DIR=str(tmp_path / "site_cache"))
    dvc = str(Path(sys.executable).parent / "dvc")   # the venv running the tests
    subprocess.run([dvc, "init", "--no-scm", "-q"], cwd=repo, env=env, check=True,
                   capture_output=True, timeout=120)
    ours = {name: dvc_md5(repo / name) for name in TREES}  # before dvc touches anything
    res = subprocess.run([dvc, "add", "-q", *TREES], cwd=repo, env=env, capture_output=True,
                         text=True, timeout=180)
    assert res.returncode == 0, res.stderr
    for name in TREES:
        meta = yaml.safe_load((repo / f"{name}.dvc").read_text())
        assert ours[name] == meta["outs"][0]["md5"], name


def test_stable_hash_order_independent_and_sensitive():
    """stable_hash ignores dict key order and changes when a value changes."""
    a = stable_hash({"x": 1, "y": [1, 2]})
    assert a == stable_hash({"y": [1, 2], "x": 1})
    assert a != stable_hash({"x": 1, "y": [2, 1]})
    assert len(a) == 16
