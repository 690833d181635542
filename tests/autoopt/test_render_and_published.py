"""Renderer output and the reader of the published AutoOpt-11k layout (offline, on the fixture)."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from stages.autoopt.data import render
from stages.autoopt.data.published import PublishedDataError, load_published

from .conftest import FIXTURE


def test_compact_keeps_sub_and_superscripts_together():
    assert render.compact("x _ { 1 } ^ { 2 } \\quad \\in x") == "x_{1}^{2}\\quad\\in x"
    assert render.split_lines("a \\\\ b _ { 1 }") == ["a", "b_{1}"]


def test_render_styles_and_determinism():
    latex = "\\min _ { x } \\quad x _ { 1 } ^ { 2 } \\\\ x \\in [ - 1 , 1 ] ^ { 2 }"
    a = render.render(latex, "printed", np.random.default_rng(3))
    b = render.render(latex, "printed", np.random.default_rng(3))
    h = render.render(latex, "handwritten", np.random.default_rng(3))
    assert a.dtype == np.uint8 and a.ndim == 2 and np.array_equal(a, b)
    assert a.min() < 100 and np.median(a) == 255          # dark ink on white
    assert h.shape != a.shape or not np.array_equal(h, a)
    x = render.to_input(a, 40, 200)
    assert x.shape == (40, 200) and 0 <= x.min() and x.max() <= 1
    with pytest.raises(ValueError, match="style must be"):
        render.render(latex, "cursive", np.random.default_rng(0))
    with pytest.raises(ValueError, match="cannot typeset"):
        render.render("\\notacommand { x }", "printed", np.random.default_rng(0))


def test_fixture_loads_in_the_published_layout():
    splits = load_published(FIXTURE)
    assert set(splits) == {"train", "validation", "test"}
    lines = (FIXTURE / "train" / "Latex.txt").read_text().split("\n")
    for idx, png, latex in splits["train"]:
        assert png.name == f"{idx}.png" and latex == lines[idx]
    assert [len(v) for v in splits.values()] == [3, 2, 2]
    assert len(load_published(FIXTURE, limit=1)["train"]) == 1


def test_missing_data_says_how_to_get_it(tmp_path):
    with pytest.raises(PublishedDataError) as info:
        load_published(tmp_path / "nowhere")
    msg = str(info.value)
    assert "not found" in msg and "ankurzing/autoopt-11k" in msg and "published_path" in msg


def test_broken_layouts(tmp_path):
    root = tmp_path / "ao"
    shutil.copytree(FIXTURE, root)
    shutil.rmtree(root / "valid")
    with pytest.raises(PublishedDataError, match="missing split folder"):
        load_published(root)
    shutil.copytree(FIXTURE / "valid", root / "valid")
    (root / "test" / "Latex.txt").write_text("only one line\n")
    with pytest.raises(PublishedDataError, match="has no line 1"):
        load_published(root)
    (root / "test" / "Latex.txt").unlink()
    with pytest.raises(PublishedDataError, match="expected Images/ and Latex.txt"):
        load_published(root)
