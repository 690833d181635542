"""benchmarks/pipeline/silent_stretch.py: a stage's longest silence from a time-stamped log, by
hand on a small log."""
from __future__ import annotations

import importlib.util

import pytest

from tests.helpers import REPO


@pytest.fixture(scope="module")
def ss():
    spec = importlib.util.spec_from_file_location("silent_stretch", REPO / "benchmarks/pipeline/silent_stretch.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


LOG = """0.000 Running stage 'params':
0.800 > python -m claimbench.params_check
1.500 Running stage 'stages/s/dvc.yaml:s-train':
1.600 [s-train] profile=default verdict seeds=[0, 1]
4.000 epochs:  10%|#         | 1/10
21.000 epochs: 100%|##########| 10/10
22.000 [s-train] done in 20.4s
22.500 Running stage 'ledger':
40.000 [ledger] done in 17.5s
40.100 [end]
"""


def test_each_stages_longest_silence_and_the_line_that_ended_it(ss):
    got = ss.silent_stretches(ss.parse(LOG))
    assert list(got) == ["params", "s-train", "ledger"]
    assert got["params"]["silent_s"] == pytest.approx(0.8) and got["params"]["wall_s"] == pytest.approx(1.5)
    assert got["s-train"]["silent_s"] == pytest.approx(17.0) and got["s-train"]["until"].startswith("epochs: 100%")
    assert got["ledger"]["silent_s"] == pytest.approx(17.5) and got["ledger"]["until"] == "[ledger] done in 17.5s"


def test_the_report_names_stages_over_the_limit(ss, capsys):
    assert ss.report(ss.silent_stretches(ss.parse(LOG)), limit=15) == 1
    assert "over 15 s: 2 (ledger, s-train)" in capsys.readouterr().out
    assert ss.report(ss.silent_stretches(ss.parse(LOG)), limit=20) == 0


def test_a_log_it_did_not_write_is_refused(ss):
    with pytest.raises(ValueError, match="not a line this script wrote"):
        ss.parse("Running stage 'x'\n")
