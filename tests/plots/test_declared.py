"""Every study declares its plots in its dvc.yaml's top-level ``plots:`` (what ``dvc plots show``
draws), and each declared plot can draw: its file exists and has the columns it names, in the
committed reports and after the smoke build."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from claimbench.dvc_plots import Declared, declared_plots, plot_problems
from stages.common.runtime.dvcfile import load_stages

REPO = Path(__file__).resolve().parents[2]
STUDIES = sorted(p.parent.name for p in (REPO / "stages").glob("*/claims.yaml"))


def test_there_are_fifteen_studies_or_more():
    assert len(STUDIES) >= 15, STUDIES


@pytest.mark.parametrize("study", STUDIES)
def test_every_study_declares_vega_and_image_plots_of_its_stages_outs(study):
    dvcfile = f"stages/{study}/dvc.yaml"
    mine = [p for p in declared_plots(REPO) if p.dvcfile == dvcfile]
    assert any(not p.is_image for p in mine), f"{dvcfile} declares no plot of a table"
    assert any(p.is_image for p in mine), f"{dvcfile} declares none of its PNGs"
    outs = {o for s in load_stages(REPO).values() if s.file == dvcfile for o in s.outs}
    for p in mine:
        assert p.path.startswith(f"reports/{study}/"), p
        assert p.path in outs, f"{p.path} is no out of a {study} stage: the build would not make it"


def test_declared_plots_draw_from_the_committed_reports():
    plots = declared_plots(REPO)
    assert len(plots) >= 2 * len(STUDIES)
    assert plot_problems(REPO, plots) == []


def test_plot_problems_names_each_defect(tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports/t.csv").write_text("step,loss\n1,2\n")
    bad = [Declared("d.yaml", "no file", "reports/none.csv", "linear", "step", ("loss",), "t"),
           Declared("d.yaml", "no column", "reports/t.csv", "linear", "step", ("acc",), "t"),
           Declared("d.yaml", "no template", "reports/t.csv", "pie", "step", ("loss",), "t"),
           Declared("d.yaml", "no title", "reports/t.csv", "linear", "step", ("loss",), None),
           Declared("d.yaml", "no image", "reports/x.png")]
    found = plot_problems(tmp_path, bad)
    assert [f.split("'")[1] for f in found] == ["no file", "no column", "no template", "no title", "no image"]
    assert "has no column acc" in found[1] and "unknown template 'pie'" in found[2]
    assert plot_problems(tmp_path, [Declared("d.yaml", "fine", "reports/t.csv", "linear", "step",
                                             ("loss",), "t")]) == []


def test_a_new_study_gets_a_plots_block_and_its_table_is_drawn_once():
    from claimbench.scaffold import TEMPLATES, render

    text = render((TEMPLATES / "dvc.yaml.tmpl").read_text(),
                  {"study": "demo", "Study": "Demo", "title": "t", "paper": "p"})
    spec = yaml.safe_load(text)
    (entry,) = [e for e in spec["plots"] if isinstance(e, dict)]
    (props,) = entry.values()
    assert list(props["y"]) == ["../../reports/demo/test_mse.csv"] and props["template"] and props["title"]
    assert "../../reports/demo/test_mse.png" in spec["plots"]
    stage_plots = [p for s in spec["stages"].values() for p in s.get("plots", [])]
    assert stage_plots == [], "a table under a stage's plots: is drawn a second time, without the template"


@pytest.mark.pipeline
def test_declared_plots_draw_after_the_smoke_build(smoke_built):
    root = smoke_built[0]
    plots = declared_plots(root)
    assert {p.dvcfile for p in plots} >= {f"stages/{s}/dvc.yaml" for s in STUDIES}
    assert plot_problems(root, plots) == []
