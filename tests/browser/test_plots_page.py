"""``dvc plots show`` and ``dvc plots diff`` on the smoke build, opened in a real headless Chromium:
every chart draws (an SVG per vega plot), every image loads, and there is no console error and no
request off the machine (the page template inlines vega: claimbench/dvc_plots.py). Each test
saves screenshots under its tmp_path."""
from __future__ import annotations

import csv
import io
import re
import time
from pathlib import Path

from dvc_render.base import Renderer

from claimbench.dvc_plots import declared_plots, external_urls
from tests.builds import sh

# the plot the diff test changes, and its id in the page (dvc-render turns ": " into "__")
CHANGED_CSV, CHANGED_COLUMN, CHANGED_ID = "reports/zipf_bigram/realtext_curves.csv", "adam", "zipf_bigram__real_text"
UNDRAWN = ("return arguments[0].filter(function(id){var e = document.getElementById(id);"
           "return !(e && e.querySelector('svg.marks, canvas.marks'));});")
BROKEN_IMAGES = ("return [].filter.call(document.images, function(i){"
                 "return !(i.complete && i.naturalWidth > 0);}).map(function(i){return i.src;});")


def _render(root: Path, out: Path, *args: str) -> tuple[Path, float]:
    t0 = time.perf_counter()
    proc = sh(["dvc", "plots", *args, "-o", str(out)], root)
    # DVC still writes the page when a plot names a column its table lacks, with a warning
    assert "WARNING" not in proc.stderr, proc.stderr[-2000:]
    return out / "index.html", time.perf_counter() - t0


def _open_and_wait(browser, page: Path, timeout: float = 90) -> tuple[list[str], list[str], float]:
    """Open the page; (ids of its vega plots, those still without a chart after ``timeout``, seconds)."""
    ids = re.findall(r"vegaEmbed\('#([^']+)'", page.read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    browser.open(page)
    undrawn = ids
    while undrawn and time.perf_counter() - t0 < timeout:
        undrawn = browser.driver.execute_script(UNDRAWN, ids)
        time.sleep(0.25)
    return ids, undrawn, time.perf_counter() - t0


def _show(browser, element_id: str, name: str) -> Path:
    browser.driver.execute_script("document.getElementById(arguments[0]).scrollIntoView();", element_id)
    return browser.screenshot(name)


def test_plots_show_draws_every_chart_offline(browser, built_copy, tmp_path):
    page, render_s = _render(built_copy, tmp_path / "show", "show")
    html = page.read_text(encoding="utf-8")
    assert external_urls(html) == [] and "cdn.jsdelivr" not in html
    ids, undrawn, load_s = _open_and_wait(browser, page)
    declared = declared_plots(built_copy)
    wanted = {Renderer.remove_special_chars(p.plot_id) for p in declared if not p.is_image}
    assert wanted <= set(ids), f"declared but not in the page: {sorted(wanted - set(ids))}"
    assert undrawn == [], f"no chart after load: {undrawn}"
    assert browser.driver.execute_script(BROKEN_IMAGES) == []
    images = browser.driver.execute_script("return document.images.length;")
    assert images >= sum(p.is_image for p in declared)
    assert browser.console_errors() == []
    assert browser.external_requests() == []
    browser.screenshot("plots_show_top")
    _show(browser, "ensemble_tail__tails", "plots_show_lines_by_series")   # a long table, one line per series
    _show(browser, "fgbench__by_type", "plots_show_bars_by_series")
    print(f"dvc plots show: {render_s:.1f} s, page {page.stat().st_size / 1e6:.2f} MB, "
          f"{len(ids)} charts and {images} images drawn in {load_s:.1f} s")


def test_plots_diff_draws_both_revisions_offline(browser, built_copy, tmp_path):
    git = ["git", "-c", "user.email=t@localhost", "-c", "user.name=t"]
    sh([*git, "add", "-A"], built_copy)
    sh([*git, "commit", "-qm", "the smoke build's reports", "--allow-empty"], built_copy)
    path = built_copy / CHANGED_CSV
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    for row in rows:                                   # the workspace's curve differs from HEAD's
        row[CHANGED_COLUMN] = str(float(row[CHANGED_COLUMN]) * 0.5)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(buf.getvalue())

    page, render_s = _render(built_copy, tmp_path / "diff", "diff", "HEAD")
    assert external_urls(page.read_text(encoding="utf-8")) == []
    ids, undrawn, load_s = _open_and_wait(browser, page)
    assert CHANGED_ID in ids and undrawn == [], undrawn
    legend = browser.driver.execute_script(
        "return document.getElementById(arguments[0]).querySelector('svg').textContent;", CHANGED_ID)
    assert "HEAD" in legend and "workspace" in legend, legend[:300]
    assert browser.driver.execute_script(BROKEN_IMAGES) == []
    assert browser.console_errors() == []
    assert browser.external_requests() == []
    _show(browser, CHANGED_ID, "plots_diff_changed_curve")
    print(f"dvc plots diff HEAD: {render_s:.1f} s, page {page.stat().st_size / 1e6:.2f} MB, "
          f"{len(ids)} charts drawn in {load_s:.1f} s")
