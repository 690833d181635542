"""Every bad input a clear error: the README's table "When an input is bad", one test a row.

Each row breaks one thing in a copy of the smoke build, runs what a user would run, and checks
the exit status (2: fix the input and run again; a retry cannot help, so the flow does not
retry it), that the message names the file (or the name) and what to do, and that nothing under
data/ or reports/ changed. The full disk is a real one: a copy of the study in a tmpfs of a few
kilobytes more than it needs, under bubblewrap."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import sh, stage_names, tree_digest

pytestmark = pytest.mark.pipeline
PY = sys.executable


@pytest.fixture(scope="module")
def repo(smoke_built, tmp_path_factory) -> Path:
    """One copy of the smoke build for the whole table: each row restores what it broke."""
    from tests.builds import copy_built

    return copy_built(smoke_built[0], tmp_path_factory.mktemp("badinput") / "repo")


class Broken:
    """Replace a file's text for the duration of a row, then put the original back."""

    def __init__(self, root: Path, rel: str, edit):
        self.path, self.edit = root / rel, edit

    def __enter__(self):
        self.saved = self.path.read_bytes() if self.path.exists() else None
        text = self.edit(self.saved.decode() if self.saved is not None else None)
        if text is None:
            self.path.unlink()
        else:
            self.path.write_text(text)
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            self.path.write_bytes(self.saved)


def _run(cmd: list[str], root: Path, **kw) -> tuple[int, str]:
    proc = sh(cmd, root, check=False, **kw)
    return proc.returncode, proc.stdout + proc.stderr


def _unclosed_list(text: str) -> str:
    return text.replace("seeds: [0, 1]", "seeds: [0, 1", 1) if "seeds: [0, 1]" in text else text + "\nx: [1,\n"


# (row id, file to break, how, command, what the message must say)
ROWS = [
    ("params-yaml-syntax", "params.yaml", lambda t: t + "\nbroken: [1, 2\n",
     [PY, "-m", "stages.zipf_bigram.evaluate"],
     ["params.yaml: not valid YAML (line", "git checkout -- params.yaml"]),
    ("params-yaml-syntax-validate", "params.yaml", lambda t: t + "\nbroken: [1, 2\n",
     [PY, "-m", "claimbench.params_check"],
     ["params.yaml: not valid YAML (line", "git checkout -- params.yaml"]),
    ("study-dvc-yaml-syntax", "stages/zipf_bigram/dvc.yaml", lambda t: t.replace("stages:", "stages: [", 1),
     [PY, "-m", "stages.zipf_bigram.evaluate"],
     ["stages/zipf_bigram/dvc.yaml: not valid YAML (line", "git checkout -- stages/zipf_bigram/dvc.yaml"]),
    ("claims-yaml-syntax", "stages/zipf_bigram/claims.yaml", lambda t: t + "\n  - id: [\n",
     [PY, "-m", "stages.ledger.build"],
     ["stage ledger: stages/zipf_bigram/claims.yaml: not valid YAML (line",
      "git checkout -- stages/zipf_bigram/claims.yaml"]),
    ("study-params-json-syntax", "stages/zipf_bigram/params.json", lambda t: t[: len(t) // 2],
     [PY, "-m", "stages.zipf_bigram.evaluate"],
     ["stages/zipf_bigram/params.json: not valid JSON"]),
    ("study-param-value", "stages/zipf_bigram/params.json",
     lambda t: t.replace('"fit_min_log2_d": 7', '"fit_min_log2_d": "seven"', 1),
     [PY, "-m", "stages.zipf_bigram.evaluate"],
     ["zipf_bigram.smoke.evaluate.fit_min_log2_d", "seven"]),
    ("input-missing", "data/zipf_bigram/results.json", lambda t: None,
     [PY, "-m", "stages.zipf_bigram.evaluate"],
     ["data/zipf_bigram/results.json (made by stage zipf_bigram-train) is missing", "dvc repro"]),
    ("input-truncated", "data/zipf_bigram/results.json", lambda t: t[: len(t) // 2],
     [PY, "-m", "stages.zipf_bigram.evaluate"],
     ["data/zipf_bigram/results.json differs from what stage zipf_bigram-train recorded in dvc.lock",
      "dvc checkout data/zipf_bigram/results.json"]),
    ("unknown-study", None, None, [PY, "-m", "claimbench.cli", "run", "nosuch", "evaluate"],
     ["no stage module stages.nosuch.evaluate", "claimbench stages"]),
    ("unknown-stage", None, None, [PY, "-m", "claimbench.cli", "run", "zipf_bigram", "nosuch"],
     ["no stage module stages.zipf_bigram.nosuch", "claimbench stages"]),
    ("unknown-study-validate", None, None, [PY, "-m", "claimbench.cli", "validate", "nosuch"],
     ["no study 'nosuch'", "zipf_bigram"]),
]


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_a_bad_input_exits_2_naming_the_file_and_changes_nothing(repo, row):
    _, rel, edit, cmd, says = row
    before = tree_digest(repo)
    lock = (repo / "dvc.lock").read_text()
    if rel is None:
        code, out = _run(cmd, repo)
    else:
        with Broken(repo, rel, edit):
            code, out = _run(cmd, repo)
    assert code == 2, out
    for s in says:
        assert s in out, f"{s!r} not in:\n{out[-3000:]}"
    assert "Traceback" not in out, out[-3000:]
    assert tree_digest(repo) == before and (repo / "dvc.lock").read_text() == lock


def test_dvc_names_a_broken_dvc_yaml_itself_and_runs_nothing(repo):
    """`dvc repro` parses every dvc.yaml first: DVC's own error (its exit status 255), naming the
    file's line, and no stage runs."""
    before = tree_digest(repo)
    with Broken(repo, "stages/zipf_bigram/dvc.yaml", lambda t: t.replace("stages:", "stages: [", 1)):
        code, out = _run(["dvc", "repro"], repo)
    assert code == 255 and "not find expected" in out.lower() and stage_names(out) == [], out
    assert tree_digest(repo) == before


def test_the_flow_exits_2_on_bad_input_and_does_not_retry_it(repo):
    """The Prefect flow: a broken params.yaml stops it before any stage (exit 2; an unknown target
    stage takes the same path: tests/pipeline/test_flow_units.py); a bad value in a study's params fails its params stage with status 2, which the flow does
    not retry (--retries 3 given), and the flow exits 2 too."""
    before = tree_digest(repo)
    flow = [PY, "-m", "flows.pipeline", "--no-pull", "--no-push", "--retry-delay", "0"]
    with Broken(repo, "params.yaml", lambda t: t + "\nbroken: [1, 2\n"):
        code, out = _run(flow, repo)
    assert code == 2 and "params.yaml: not valid YAML (line" in out, out[-3000:]
    with Broken(repo, "stages/zipf_bigram/params.json",
                lambda t: t.replace('"fit_min_log2_d": 7', '"fit_min_log2_d": "seven"', 1)):
        code, out = _run(flow + ["--retries", "3"], repo)
    assert code == 2 and "stage params failed (exit status 2)" in out, out[-3000:]
    assert "AwaitingRetry" not in out and "Retrying" not in out, out[-3000:]
    assert tree_digest(repo) == before


def test_a_full_disk_exits_2_and_leaves_no_partial_output(repo, tmp_path):
    """A real full disk: the study's built files copied into a tmpfs that is then filled to the
    last byte (bubblewrap mounts it), and its evaluate stage run there. It exits 2 naming the file
    it could not write and what to do; no temporary file is left beside an output, and every
    output is either the build's or absent."""
    from tests.helpers import require_sandbox

    require_sandbox()
    src = tmp_path / "study"
    keep = ["stages", "claimbench", "params.yaml", "dvc.yaml", "dvc.lock", "pyproject.toml", ".git",
            "data/zipf_bigram", "reports/zipf_bigram"]
    for rel in keep:
        (shutil.copytree if (repo / rel).is_dir() else shutil.copy2)(repo / rel, src / rel)
    need = sum(p.stat().st_size + 4096 for p in src.rglob("*"))          # tmpfs takes whole pages
    mnt = tmp_path / "disk"
    mnt.mkdir()
    # the copy, then a filler that takes every byte left; then the stage
    script = (f"set -e; cp -a {src}/. {mnt}/; cd {mnt}; set +e; cat /dev/zero > filler 2>/dev/null; "
              f"CLAIMBENCH_TRACKING=off {PY} -m stages.zipf_bigram.evaluate; echo \"exit=$?\"; "
              f"find . -name '.tmp-*' -o -name '.old-*'; echo '--'; "
              f"{PY} -c \"import hashlib, json, pathlib; print(json.dumps({{p.as_posix(): "
              f"hashlib.sha256(p.read_bytes()).hexdigest() for t in ('data', 'reports') "
              f"for p in sorted(pathlib.Path(t).rglob('*')) if p.is_file()}}))\"")
    proc = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--size", str(2 * need + 16 * 1024 * 1024),
                           "--tmpfs", str(mnt), "bash", "-c", script], capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert "exit=2" in out, out[-3000:]
    assert "no space left on the device writing" in out and "Free some space" in out, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    leftovers, files = proc.stdout.split("exit=2", 1)[1].split("--\n", 1)
    assert leftovers.strip() == "", f"partial files left: {leftovers}"
    now = json.loads(files.strip().splitlines()[-1])
    was = {k: v for k, v in tree_digest(src).items() if k.startswith(("data/zipf_bigram", "reports/zipf_bigram"))}
    assert set(now) <= set(was) and all(now[k] == was[k] for k in now), "an output was half-written"


def test_the_readme_table_lists_every_row():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    table = readme.split("### When an input is bad", 1)[1].split("\n#", 1)[0]
    for row in [r[0] for r in ROWS] + ["dvc-yaml-dvc-repro", "flow", "disk-full"]:
        assert f"`{row}`" in table, f"README's bad-input table has no row {row}"
