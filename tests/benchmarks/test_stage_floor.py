"""benchmarks/pipeline/stage_floor.py: the import timer's top-level entries, the stages' bodies
and the imports stages share, by hand on small inputs; and the import timer's format, read from
a real interpreter."""
from __future__ import annotations

import subprocess
import sys

import pytest

from benchmarks.pipeline.stage_floor import bodies, merge_saving, top_level_imports

# Python's format: self | cumulative | name, two more spaces per level of nesting
TIMER = """import time: self [us] | cumulative | imported package
import time:       100 |        100 |   _io
import time:       200 |        300 | encodings
import time:       500 |       1500 |     torch._C
import time:      1000 |    2000000 |   torch
import time:        50 |    2500000 | stages.m.model
import time:       300 |     400000 | sacrebleu
import time:       300 |     300000 | sacrebleu
not a timer line
"""


def test_top_level_entries_only_and_a_module_of_two_workers_once():
    got = top_level_imports(TIMER)
    assert got == {"encodings": pytest.approx(0.0003), "stages.m.model": pytest.approx(2.5),
                   "sacrebleu": pytest.approx(0.4)}


def test_the_real_timer_reads_as_expected():
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import json"], capture_output=True,
                         text=True, check=True)
    got = top_level_imports(out.stderr)
    assert "json" in got and 0 < got["json"] < 5
    assert "json.decoder" not in got          # nested under json


def test_bodies_from_done_lines():
    rows = [(0.0, "Running stage 's-a':"), (1.0, "[s-a] done in 0.8s"), (1.1, "x done in 9s"),
            (2.0, "[s-b] done in 12.5s")]
    assert bodies(rows) == {"s-a": 0.8, "s-b": 12.5}


def test_merge_saves_what_the_stages_share():
    imports = {"a": {"torch": 0.8, "datasets": 0.4}, "b": {"torch": 0.9, "nltk": 0.6},
               "c": {"datasets": 0.5}}
    # union: torch 0.9, datasets 0.5, nltk 0.6 = 2.0; sum 1.2 + 1.5 + 0.5 = 3.2
    assert merge_saving(imports, ["a", "b", "c"]) == pytest.approx(1.2)
    assert merge_saving(imports, ["a"]) == pytest.approx(0.0)
    with pytest.raises(SystemExit, match="no such stage in this run: d"):
        merge_saving(imports, ["a", "d"])
