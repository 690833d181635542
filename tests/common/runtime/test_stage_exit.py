"""How a stage's process ends (stages.common.runtime.stage.exit_without_teardown): a stage that
succeeded ends without the interpreter's teardown, after its atexit handlers and with its output
flushed; a failed stage, one with a thread still running, or ``CLAIMBENCH_FULL_EXIT=1`` ends the
normal way. The exit happens right after the wrapper's ``done in`` line, so every stage module is
checked for nothing after its ``with stage(...)`` block and its ``main()`` call."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import PYTHON, REPO, code_copy, run_module, subprocess_env

PROBE = '''"""A stage that leaves marks: one from an atexit handler, one from the interpreter's teardown."""
import atexit
import os
import sys
import threading
import time

from stages.common.runtime.stage import stage
from stages.zipf_bigram.params import ZipfParams

MARKS = os.environ["PROBE_MARKS"]


class Teardown:
    """Deleted when the interpreter tears the module down, never before."""
    def __init__(self, path):
        self.path = path

    def __del__(self, _open=open):
        with _open(self.path, "w") as f:
            f.write("ran")


KEEP = Teardown(os.path.join(MARKS, "teardown"))


def mark(name):
    with open(os.path.join(MARKS, name), "w") as f:
        f.write("ran")


def farewell():
    mark("atexit")
    sys.stdout.write("last words, unflushed")


def main():
    with stage("zipf_bigram", "prepare", ZipfParams, track=False):
        atexit.register(farewell)
        mode = os.environ.get("PROBE_MODE", "")
        if mode == "thread":
            threading.Thread(target=lambda: (time.sleep(0.3), mark("thread"))).start()
        if mode == "fail":
            raise RuntimeError("the probe failed on purpose")


if __name__ == "__main__":
    main()
'''


@pytest.fixture(scope="module")
def probe_root(tmp_path_factory):
    root = code_copy(tmp_path_factory.mktemp("exit"))
    (root / "stages" / "zipf_bigram" / "exit_probe.py").write_text(PROBE)
    return root


def run_probe(root: Path, marks: Path, **env: str):
    marks.mkdir()
    res = run_module(root, "stages.zipf_bigram.exit_probe",
                     subprocess_env(PROBE_MARKS=str(marks), CLAIMBENCH_TRACKING="off", **env), PYTHON)
    return res, {p.name for p in marks.iterdir()}


def test_a_stage_that_succeeded_skips_teardown_but_runs_atexit_and_flushes(probe_root, tmp_path):
    res, marks = run_probe(probe_root, tmp_path / "m")
    assert res.returncode == 0, res.stderr
    assert "[zipf_bigram-prepare] done in" in res.stdout
    assert res.stdout.endswith("last words, unflushed")
    assert marks == {"atexit"}


def test_full_exit_switch_keeps_the_teardown(probe_root, tmp_path):
    """The teardown mark is what the other tests read: here it must appear."""
    res, marks = run_probe(probe_root, tmp_path / "m", CLAIMBENCH_FULL_EXIT="1")
    assert res.returncode == 0, res.stderr
    assert res.stdout.endswith("last words, unflushed")
    assert marks == {"atexit", "teardown"}


def test_a_thread_still_running_gets_the_normal_exit_that_waits_for_it(probe_root, tmp_path):
    res, marks = run_probe(probe_root, tmp_path / "m", PROBE_MODE="thread")
    assert res.returncode == 0, res.stderr
    assert marks == {"atexit", "teardown", "thread"}


def test_a_failed_stage_exits_1_the_normal_way(probe_root, tmp_path):
    res, marks = run_probe(probe_root, tmp_path / "m", PROBE_MODE="fail")
    assert res.returncode == 1
    assert "the probe failed on purpose" in res.stderr and "done in" not in res.stdout
    assert marks == {"atexit", "teardown"}


def test_a_stage_called_from_another_program_returns():
    """Only a stage run as ``python -m stages....`` owns its process (pytest, here, does not)."""
    from stages.common.runtime.stage import owns_process

    assert not owns_process()


def _stage_modules():
    """Each stage module (a ``main`` holding ``with stage(...)``) and each package's ``__main__.py``
    (``python -m stages.corpora``): its path, its top-level statements, its guards and its mains."""
    for path in sorted((REPO / "stages").rglob("*.py")):
        tree = ast.parse(path.read_text())
        holders = [f for f in tree.body if isinstance(f, ast.FunctionDef)
                   and any(isinstance(n, ast.With) and "stage(" in ast.unparse(n.items[0].context_expr)
                           for n in ast.walk(f))]
        if holders or path.name == "__main__.py":
            guards = [s for s in tree.body if isinstance(s, ast.If) and "__main__" in ast.unparse(s.test)]
            yield path.relative_to(REPO).as_posix(), tree, guards, holders


def test_nothing_follows_a_stage_block_or_the_main_call():
    """The wrapper ends the process after ``done in``: code after the ``with stage(...)`` block
    of ``main``, or after ``main()`` in the ``__main__`` guard, would never run. Every module a
    dvc.yaml cmd runs under stages/ is among those checked."""
    from claimbench.depgraph import stage_module
    from stages.common.runtime.dvcfile import load_stages

    checked = set()
    for rel, tree, guards, holders in _stage_modules():
        checked.add(rel[:-3].replace("/", ".").removesuffix(".__main__"))
        for f in holders:
            last = f.body[-1]
            assert f.name == "main" and isinstance(last, ast.With) and "stage(" in ast.unparse(
                last.items[0].context_expr), f"{rel}: `with stage(...)` must be the last statement of main()"
        if not guards:       # stages/corpora/stage.py: run by its package's __main__.py, checked too
            package_main = REPO / rel.rsplit("/", 1)[0] / "__main__.py"
            module = rel[:-3].replace("/", ".")
            assert package_main.is_file() and f"from {module} import main" in package_main.read_text(), \
                f"{rel}: a stage module without a __main__ guard is run by its package's __main__.py"
            continue
        assert len(guards) == 1 and guards[0] is tree.body[-1], f"{rel}: one __main__ guard, at the end"
        body = guards[0].body
        assert len(body) == 1 and isinstance(body[0], ast.Expr) and \
            ast.unparse(body[0].value).startswith("main("), f"{rel}: the __main__ guard only calls main()"
    run = {m for m in (stage_module(s.cmd) for s in load_stages(REPO).values())
           if m and m.startswith("stages.")}          # the params gate (claimbench/) has no stage()
    assert len(run) >= 100 and run <= checked, f"not checked: {sorted(run - checked)}"
