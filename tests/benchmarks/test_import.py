"""Every benchmark script imports cleanly and runs nothing when imported (its work sits behind
``if __name__ == "__main__"``), so a rename in a study breaks a test here instead of the
benchmark silently. Running them is their own business (each prints its ratios)."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from unittest import mock

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in (REPO / "benchmarks").rglob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.relative_to(REPO / "benchmarks").with_suffix("").as_posix() for p in SCRIPTS])
def test_a_benchmark_imports_and_runs_nothing(script, capsys, monkeypatch):
    name = script.relative_to(REPO).with_suffix("").as_posix().replace("/", ".")
    spec = importlib.util.spec_from_file_location(name, script)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)     # as an import does (dataclasses look it up)
    # a script may set its thread count at import (mairl_entropy/qre.py): not for the rest of the
    # session, whose subprocesses (the smoke build's reruns) would inherit it
    with mock.patch.dict(os.environ):
        spec.loader.exec_module(module)
    out = capsys.readouterr()
    assert out.out == "" and out.err == "", f"{script.name} printed at import:\n{out.out[-500:]}{out.err[-500:]}"


def _private_uses(path: Path) -> list[str]:
    """``from stages... import _name`` and ``module._name`` where ``module`` was imported from stages."""
    import ast

    tree = ast.parse(path.read_text())
    modules, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("stages"):
            for a in node.names:
                if a.name.startswith("_"):
                    found.append(f"{node.lineno}: from {node.module} import {a.name}")
                modules.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.name.startswith("stages") and a.asname}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            found.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_benchmarks_use_only_public_names_of_the_studies():
    """A benchmark that reaches into a study's private names breaks silently when the study renames
    them; the names a benchmark needs are public."""
    bad = {p.relative_to(REPO).as_posix(): _private_uses(p) for p in SCRIPTS}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"benchmarks using private names of studies: {bad}"
    probe = REPO / "benchmarks" / "bench.py"
    assert _private_uses(probe) == []
