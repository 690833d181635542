"""`claimbench run <study> <step> [args ...]`: a stage runs with no arguments; a study's tool gets
its own arguments in sys.argv; its return code is the command's exit status."""
from __future__ import annotations

import sys
import types

import pytest

from claimbench import cli


def _fake_module(seen: list, rc=None):
    def main():
        seen.append(list(sys.argv))
        return rc
    return types.SimpleNamespace(main=main)


def test_run_forwards_tool_arguments_and_exit_code(monkeypatch):
    seen: list = []
    monkeypatch.setattr(cli.importlib, "import_module", lambda name: _fake_module(seen, rc=3))
    monkeypatch.setattr(sys, "argv", ["claimbench"])
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "autoopt", "solve", "image.png", "--budget", "50"])
    assert exc.value.code == 3
    assert seen == [["stages.autoopt.solve", "image.png", "--budget", "50"]]


def test_run_a_stage_without_arguments_exits_zero(monkeypatch):
    seen: list = []
    monkeypatch.setattr(cli.importlib, "import_module", lambda name: _fake_module(seen))
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "zipf_bigram", "evaluate"])
    assert exc.value.code == 0 and seen == [["stages.zipf_bigram.evaluate"]]


def test_run_unknown_module_says_so(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "no_such_study", "solve", "x.png"])
    assert exc.value.code == 2
    assert "no stage module stages.no_such_study.solve" in capsys.readouterr().err
