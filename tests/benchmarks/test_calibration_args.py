"""The command line every study's calibration and seeds benchmarks share
(benchmarks/common/calibration.py): calibration seeds only, and --smoke's defaults."""
from __future__ import annotations

import pytest

from benchmarks.common.calibration import parse_seeds, seed_parser, set_dotted


def test_defaults_smoke_and_explicit_options():
    a, seeds = parse_seeds(seed_parser("x"), [])
    assert (seeds, a.profile) == ([1000, 1001, 1002, 1003, 1004], "default")
    a, seeds = parse_seeds(seed_parser("x"), ["--smoke"])
    assert (seeds, a.profile) == ([1000, 1001], "smoke")
    a, seeds = parse_seeds(seed_parser("x"), ["--smoke", "--seeds", "1007"])
    assert (seeds, a.profile) == ([1007], "smoke")


def test_a_verdict_seed_is_refused():
    with pytest.raises(SystemExit, match="calibration seeds"):
        parse_seeds(seed_parser("x"), ["--seeds", "1000,4"])


def test_set_dotted():
    data = {"a": {"b": 1}}
    set_dotted(data, 'a.b=[2, 3]')
    assert data == {"a": {"b": [2, 3]}}
