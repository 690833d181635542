"""The seeds benchmarks' shared measurement (benchmarks/common/calibration.py,
one_process_vs_one_per_seed): each seed in its own child process against all seeds in one process.
A tiny fake script stands in for a study's seeds.py: its figures either depend on the seed alone
(the check passes and the ratio line is printed) or on a counter that the seeds before it moved
(the two ways differ: SystemExit)."""
from __future__ import annotations

import argparse
import sys

import numpy as np
import pytest

from benchmarks.common.calibration import (
    add_one_seed_args, one_process_vs_one_per_seed, same_figures, seed_parser, write_one_seed)

FAKE = '''
import sys
sys.path.insert(0, {repo!r})
import numpy as np
from benchmarks.common.calibration import add_one_seed_args, parse_seeds, seed_parser, write_one_seed

CALLS = [0]


def by_seed(seed):
    return {{"score": seed / 7, "curve": [seed % 3, seed // 3]}}


def by_counter(seed):
    CALLS[0] += 1
    return {{"score": seed + CALLS[0]}}


def arrays(seed):
    return {{"w": np.random.default_rng(seed).normal(size=(3, 2)), "n": np.arange(seed % 5)}}


if __name__ == "__main__":
    ap = add_one_seed_args(seed_parser(None))
    ap.add_argument("--fn")
    a, _ = parse_seeds(ap)
    write_one_seed(a, globals()[a.fn](a.one))
'''


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """The fake script's path and module (its functions, as the parent process runs them)."""
    from tests.helpers import REPO

    path = tmp_path / "fake_seeds.py"
    path.write_text(FAKE.format(repo=str(REPO)))
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    sys.modules.pop("fake_seeds", None)
    return path, importlib.import_module("fake_seeds")


def _run(fake, fn: str):
    path, mod = fake
    return one_process_vs_one_per_seed([1000, 1001, 1002], getattr(mod, fn),
                                       [sys.executable, str(path), "--fn", fn], label="profile test")


@pytest.mark.parametrize("fn", ["by_seed", "arrays"])
def test_figures_of_the_seed_alone_pass_and_print_the_ratio(fake, fn, capsys):
    together = _run(fake, fn)
    out = capsys.readouterr().out
    assert sorted(together) == [1000, 1001, 1002]
    assert "ratio one process / one per seed: wall " in out and ", CPU " in out
    assert "one process per seed: " in out and "all seeds in one process" in out
    assert "the same both ways: True" in out


def test_figures_that_depend_on_earlier_seeds_raise(fake, capsys):
    with pytest.raises(SystemExit, match="differ between one process per seed and one process"):
        _run(fake, "by_counter")
    assert "the same both ways: False" in capsys.readouterr().out


def test_a_child_refuses_a_verdict_seed(tmp_path):
    with pytest.raises(SystemExit, match="calibration seeds"):
        write_one_seed(argparse.Namespace(one=3, out=str(tmp_path / "x")), {"a": 1})


def test_the_hidden_child_options_stay_out_of_the_help():
    ap = add_one_seed_args(seed_parser("x"))
    assert "--one" not in ap.format_help() and "--out" not in ap.format_help()
    assert ap.parse_args(["--one", "1000", "--out", "f"]).one == 1000


def test_same_figures():
    a = {"w": np.array([1.0, 2.0])}
    assert same_figures(a, {"w": np.array([1.0, 2.0])})
    assert not same_figures(a, {"w": np.array([1.0, 2.5])})
    assert not same_figures(a, {"w": np.array([1.0, 2.0]), "extra": np.zeros(1)})
    assert same_figures({"x": (1, 2), "y": 0.5}, {"x": [1, 2], "y": 0.5})       # after a JSON round trip
    assert not same_figures({"x": 0.5}, {"x": 0.25})
