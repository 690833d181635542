"""benchmarks/report.py: a run refreshes its own section of reports/benchmarks.md, verbatim, and
keeps the others; a failing script changes nothing."""
from __future__ import annotations

import importlib.util

from tests.helpers import REPO


def _report(monkeypatch, tmp_path):
    spec = importlib.util.spec_from_file_location("bench_report", REPO / "benchmarks" / "report.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(mod, "REPORT", tmp_path / "benchmarks.md")
    return mod


def test_a_run_writes_its_section_and_keeps_the_others(monkeypatch, tmp_path, capsys):
    report = _report(monkeypatch, tmp_path)
    fast = tmp_path / "fast.py"
    fast.write_text("import sys\nprint('ratio 2.5x', sys.argv[1:])\n")
    (tmp_path / "benchmarks.md").write_text(report.render({"older": "\nkept as it was\n"}))
    assert report.main([str(fast), "--", "--repeats", "2"]) == 0
    text = (tmp_path / "benchmarks.md").read_text()
    found = report.sections(text)
    assert set(found) == {"older", "fast"} and "kept as it was" in found["older"]
    assert "ratio 2.5x ['--repeats', '2']" in found["fast"]          # the script's output, verbatim
    assert "--repeats 2`" in found["fast"] and " s wall." in found["fast"] and "cores" in found["fast"]
    assert text.startswith("# Benchmarks\n")


def test_a_failing_script_keeps_the_section_and_exits_1(monkeypatch, tmp_path):
    report = _report(monkeypatch, tmp_path)
    bad = tmp_path / "fast.py"
    (tmp_path / "benchmarks.md").write_text(report.render({"fast": "\nthe last good run\n"}))
    bad.write_text("raise SystemExit(3)\n")
    assert report.main([str(bad)]) == 1
    assert report.sections((tmp_path / "benchmarks.md").read_text())["fast"] == "\nthe last good run\n"


def test_an_unknown_name_is_refused(monkeypatch, tmp_path):
    import pytest

    report = _report(monkeypatch, tmp_path)
    with pytest.raises(SystemExit, match="no benchmark script 'nosuch'"):
        report.main(["nosuch"])
