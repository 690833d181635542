"""One house for every study: each has its folder's files (params, paths, claims, a README with the
common headings) and its tests, and is written in one dialect: no stage module imports another,
thread caps go through stages.common.device.limit_threads, missing inputs are the stage wrapper's to
refuse; the top README stays a short user guide that starts with the two commands."""
from __future__ import annotations

import ast
import re

import pytest

from claimbench.depgraph import _imports, module_file, stage_module
from stages.common.runtime.dvcfile import load_stages

from tests.helpers import REPO, calls

HEADINGS = ["## Claim", "## Paper and its figures", "## What we run", "## Results", "## Deviations and why",
            "## How to run"]
STUDIES = sorted(p.parent.name for p in (REPO / "stages").glob("*/claims.yaml"))


@pytest.mark.parametrize("study", STUDIES)
def test_every_study_has_its_files_and_readme_headings(study):
    folder = REPO / "stages" / study
    for name in ("params.json", "params.py", "paths.py", "claims.yaml", "README.md", "__init__.py"):
        assert (folder / name).is_file(), f"stages/{study}/{name} is missing"
    assert (REPO / "tests" / study).is_dir(), f"tests/{study}/ is missing"
    readme = (folder / "README.md").read_text()
    assert readme.startswith(f"# {study}"), "a study README starts with `# <study>: ...`"
    assert [line for line in readme.splitlines() if line.startswith("## ")] == HEADINGS


def _stage_modules() -> dict[str, set[str]]:
    """study -> the modules its dvc.yaml stages run."""
    out: dict[str, set[str]] = {}
    for s in load_stages(REPO).values():
        mod = stage_module(s.cmd)
        if mod and mod.startswith("stages.") and mod.split(".")[1] in STUDIES:
            out.setdefault(mod.split(".")[1], set()).add(mod)
    return out


STAGE_MODULES = _stage_modules()


@pytest.mark.parametrize("study", STUDIES)
def test_no_module_of_a_study_imports_one_of_its_stage_modules(study):
    """A stage's deps are the modules it runs: a module that imports a stage module (evaluate
    taking RESULTS from train) makes the importer's stage re-run on the other stage's edits.
    Shared paths live in paths.py, shared code in a module no stage runs."""
    stage_mods = STAGE_MODULES.get(study, set())
    assert stage_mods, f"no dvc.yaml stage runs a module of stages/{study}"
    bad = []
    for path in sorted((REPO / "stages" / study).rglob("*.py")):
        rel = path.relative_to(REPO).with_suffix("")
        me = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        for name in _imports(REPO, path):
            hit = next((m for m in stage_mods if name == m), None)
            if hit and hit != me:
                bad.append(f"{path.relative_to(REPO)} imports {hit}")
    assert not bad, "\n".join(bad)


def test_an_import_of_a_sibling_stage_module_would_be_seen():
    assert {"stages.zipf_bigram.train", "stages.zipf_bigram.evaluate"} <= STAGE_MODULES["zipf_bigram"]
    assert module_file(REPO, "stages.zipf_bigram.paths") is not None


def _calls(path, attr: str) -> list[int]:
    return [n.lineno for name, n in calls(ast.parse(path.read_text())) if name == attr]


@pytest.mark.parametrize("study", STUDIES)
def test_thread_caps_go_through_limit_threads_and_inputs_through_the_wrapper(study):
    """One way to cap threads (stages.common.device.limit_threads, which also logs stage.threads and
    caps the BLAS pools), and no hand-written "input missing" check: the stage wrapper refuses a
    missing input from dvc.yaml before the body runs (stages/common/runtime/stage.py)."""
    bad = []
    for path in sorted((REPO / "stages" / study).rglob("*.py")):
        rel = path.relative_to(REPO)
        bad += [f"{rel}:{n} calls set_num_threads" for n in _calls(path, "set_num_threads")]
        if "is missing; run `dvc repro" in path.read_text():
            bad.append(f"{rel} checks for a missing input by hand")
    init = (REPO / "stages" / study / "__init__.py").read_text()
    if "replace it with the study's experiment" in init:
        bad.append(f"stages/{study}/__init__.py still carries the scaffold's placeholder description")
    assert not bad, "\n".join(bad)


def test_top_readme_is_a_short_guide_that_starts_with_the_two_commands():
    text = (REPO / "README.md").read_text()
    lines = text.splitlines()
    assert len(lines) <= 320, f"README.md has {len(lines)} lines: study write-ups belong in stages/<study>/README.md"
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    assert "pip install -e \".[dev]\"" in blocks[0] and "dvc repro" in blocks[0]
    assert blocks[1].strip() == "python -m pytest"
    first_screen = "\n".join(lines[:32])
    for what, needle in (("how long the main job takes", " min"), ("the disk it needs", " GB"),
                         ("that the committed ledger can be read first", "reports/index.html")):
        assert needle in first_screen, f"README's first screen does not say {what}"
    for study in STUDIES:
        assert f"## {study}" not in text, f"{study}'s write-up is in the top README"


def test_no_file_points_outside_the_repository():
    """What a reader needs is in the repository: the design notes the code cites are in docs/,
    the issues it cites in docs/issues/, and the reports the ledger writes from them."""
    import subprocess

    outside = "../" + "shared/"          # written in two parts, so this file does not match itself
    hits = subprocess.run(["git", "grep", "-l", "-F", outside], cwd=REPO,
                          capture_output=True, text=True).stdout.split()
    assert not hits, f"files that point at {outside}: {hits}"
