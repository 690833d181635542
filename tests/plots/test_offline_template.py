"""The offline template of ``dvc plots show`` / ``dvc plots diff`` (claimbench/dvc_plots.py):
no request off the machine, DVC configured to use it, and the committed file up to date."""
from __future__ import annotations

from pathlib import Path

from claimbench.dvc_plots import TEMPLATE, check_template, external_urls

REPO = Path(__file__).resolve().parents[2]


def test_external_urls_finds_dvc_renders_cdn_tags():
    from dvc_render.vega import VegaRenderer

    # the checker itself: dvc-render's own <script src="https://cdn..."> tags are caught
    assert len(external_urls(VegaRenderer.SCRIPTS)) == 3
    assert external_urls('<link rel="stylesheet" href="//fonts.example/x.css">') == ["//fonts.example/x.css"]
    assert external_urls('<script src="vega.js"></script><a href="https://x.org">x</a>') == []


def test_template_has_no_external_script_or_link_and_no_scripts_placeholder():
    page = TEMPLATE.read_text(encoding="utf-8")
    assert external_urls(page) == []
    assert "{plot_divs}" in page                     # where dvc-render puts the plots
    assert "{scripts}" not in page, "dvc-render would put its CDN <script> tags there"
    assert "window.vegaEmbed" in page and page.count("<script") == 1
    print(f"template {TEMPLATE.stat().st_size / 1e6:.2f} MB")


def test_dvc_config_points_at_the_template():
    from dvc.repo import Repo

    with Repo(str(REPO)) as repo:
        configured = repo.config["plots"]["html_template"]
        assert (Path(repo.dvc_dir) / configured).resolve() == TEMPLATE


def test_rendered_page_has_the_plot_and_no_cdn(tmp_path):
    from dvc_render import VegaRenderer, render_html

    renderer = VegaRenderer([{"x": 1, "y": 2, "rev": "workspace"}, {"x": 2, "y": 3, "rev": "workspace"}],
                            "demo", x="x", y="y")
    out = Path(render_html([renderer], tmp_path / "index.html", html_template=str(TEMPLATE)))
    page = out.read_text(encoding="utf-8")
    assert "vegaEmbed('#demo'" in page
    assert external_urls(page) == [] and "cdn.jsdelivr" not in page
    default = Path(render_html([renderer], tmp_path / "default.html")).read_text(encoding="utf-8")
    assert len(external_urls(default)) == 3          # dvc-render's own page would load them


def test_committed_template_is_what_the_pinned_package_builds():
    assert check_template() is None                  # needs vl-convert-python (the dev extra)
