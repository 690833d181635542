"""Every benchmark script imports cleanly and runs nothing when imported (its work sits behind
``if __name__ == "__main__"``), so a rename in a study breaks a test here instead of the
benchmark silently. Running them is their own business (each prints its ratios)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in (REPO / "benchmarks").rglob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.relative_to(REPO / "benchmarks").with_suffix("").as_posix() for p in SCRIPTS])
def test_a_benchmark_imports_and_runs_nothing(script, capsys):
    name = script.relative_to(REPO).with_suffix("").as_posix().replace("/", ".")
    spec = importlib.util.spec_from_file_location(name, script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = capsys.readouterr()
    assert out.out == "" and out.err == "", f"{script.name} printed at import:\n{out.out[-500:]}{out.err[-500:]}"
