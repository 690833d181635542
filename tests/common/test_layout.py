"""One house for every study: each has its folder's files (params, claims, a README with the common
headings) and its tests; the top README stays a short user guide that starts with the two commands."""
from __future__ import annotations

import re

import pytest

from tests.helpers import REPO

HEADINGS = ["## Claim", "## Paper and its figures", "## What we run", "## Results", "## Deviations and why",
            "## How to run"]
STUDIES = sorted(p.parent.name for p in (REPO / "stages").glob("*/claims.yaml"))


@pytest.mark.parametrize("study", STUDIES)
def test_every_study_has_its_files_and_readme_headings(study):
    folder = REPO / "stages" / study
    for name in ("params.json", "params.py", "claims.yaml", "README.md", "__init__.py"):
        assert (folder / name).is_file(), f"stages/{study}/{name} is missing"
    assert (REPO / "tests" / study).is_dir(), f"tests/{study}/ is missing"
    readme = (folder / "README.md").read_text()
    assert readme.startswith(f"# {study}"), "a study README starts with `# <study>: ...`"
    assert [line for line in readme.splitlines() if line.startswith("## ")] == HEADINGS


def test_top_readme_is_a_short_guide_that_starts_with_the_two_commands():
    text = (REPO / "README.md").read_text()
    lines = text.splitlines()
    assert len(lines) <= 320, f"README.md has {len(lines)} lines: study write-ups belong in stages/<study>/README.md"
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    assert "pip install -e \".[dev]\"" in blocks[0] and "dvc repro" in blocks[0]
    assert blocks[1].strip() == "python -m pytest"
    for study in STUDIES:
        assert f"## {study}" not in text, f"{study}'s write-up is in the top README"
