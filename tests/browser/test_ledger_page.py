"""The ledger page of the smoke build, opened as a person opens it: from the file, offline, in a real
headless Chromium (tests/browser/conftest.py). Each test saves a screenshot under its tmp_path."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stages.ledger.format import verdict_of


def _claims(root: Path) -> list[dict]:
    return json.loads((root / "reports/claims.json").read_text())


def _visible_claims(driver) -> list[str]:
    return driver.execute_script(
        "return [].slice.call(document.querySelectorAll('tr.claim')).filter(function(r){"
        "return r.offsetParent !== null;}).map(function(r){return r.id;});")


@pytest.fixture
def page(smoke_built) -> Path:
    return smoke_built[0] / "reports/index.html"


def test_ledger_opens_offline_with_one_overview_row_per_study(browser, page, smoke_built):
    t0 = time.perf_counter()
    browser.open(page)
    load_s = time.perf_counter() - t0
    studies = sorted({r["study"] for r in _claims(smoke_built[0])})
    rows = browser.driver.find_elements("css selector", "#overview-table tr.ov")
    assert [r.get_attribute("data-study") for r in rows] == studies
    assert len(browser.driver.find_elements("css selector", "section.study")) == len(studies)
    width = browser.driver.execute_script(
        "document.querySelectorAll('details').forEach(function(d){d.open=true;});"
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth];")
    assert width[0] <= width[1], f"the page scrolls sideways at 1400 px: {width}"
    browser.screenshot("ledger_top")
    assert browser.console_errors() == []
    assert browser.external_requests() == []
    print(f"page {page.stat().st_size / 1e6:.2f} MB, opened in {load_s:.2f} s")


def test_only_failing_claims_in_one_click(browser, page, smoke_built):
    failing = sorted(f"claim-{r['study']}--{r['id']}" for r in _claims(smoke_built[0])
                     if verdict_of(r) not in ("holds", "retired"))     # every verdict that is not a pass
    browser.open(page)
    browser.wait_for("#only-fails").click()
    assert sorted(_visible_claims(browser.driver)) == failing
    count = browser.driver.find_element("id", "count").text
    assert count.startswith(f"{len(failing)} of "), count
    shown = {s.get_attribute("data-study") for s in browser.driver.find_elements("css selector", "tr.ov")
             if s.is_displayed()}
    assert shown == {f.split("--")[0][len("claim-"):] for f in failing}
    first = next(x for x in browser.driver.find_elements("css selector", "section.study") if x.is_displayed())
    browser.driver.execute_script("arguments[0].scrollIntoView();", first)
    browser.screenshot("ledger_only_failing")                 # a study's section, failing rows only
    browser.driver.find_element("id", "q").send_keys("zipf_bigram")       # search narrows further
    assert all(i.startswith("claim-zipf_bigram--") for i in _visible_claims(browser.driver))
    browser.driver.find_element("id", "show-all").click()
    assert len(_visible_claims(browser.driver)) == len(_claims(smoke_built[0]))
    assert browser.console_errors() == []


def test_every_plot_thumbnail_loads(browser, page, smoke_built):
    root = smoke_built[0]
    studies = {r["study"] for r in _claims(root)}
    pngs = sum(len(list((root / "reports" / s).rglob("*.png"))) for s in studies)
    browser.open(page)
    imgs = browser.driver.find_elements("css selector", "section.study img")
    assert len(imgs) == pngs > 0
    # lazy images load once scrolled to: wait for each in turn (an image scrolled past before it
    # started loading is never fetched, and a busy machine is slow to start them)
    widths: list[int] = []
    for img in imgs:
        browser.driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", img)
        deadline, w = time.time() + 15, 0
        while time.time() < deadline:
            w = browser.driver.execute_script("return arguments[0].complete ? arguments[0].naturalWidth : 0;", img)
            if w > 0:
                break
            time.sleep(0.1)
        widths.append(w)
    bad = [img.get_attribute("src") for img, w in zip(imgs, widths) if w <= 0]
    assert not bad, f"images that did not load: {bad}"
    links = [a.get_attribute("href") for a in browser.driver.find_elements("css selector", "section.study figure a")]
    assert all(Path(h.removeprefix("file://")).is_file() for h in links)      # each opens the full plot
    plots = browser.driver.find_element("css selector", "section.study .plots")
    browser.driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", plots)
    browser.screenshot("ledger_plots")                        # a study's thumbnails and its MLflow runs
    assert browser.console_errors() == []
    assert browser.external_requests() == []


def test_page_shows_the_diff_against_the_last_committed_ledger(browser, built_copy):
    """Commit the smoke ledger, break one must claim in the working tree, `claimbench diff --page`:
    the page names that claim in its comparison and marks its row."""
    root = built_copy
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "reports/claims.json"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "ledger"], cwd=root, check=True)
    rows = _claims(root)
    victim = next(r for r in rows if r["level"] == "must" and verdict_of(r) == "holds")
    victim["holds"], victim["measured"] = False, -1.0
    if "verdict" in victim:                                    # a ledger of claims contract v2
        victim["verdict"] = "fails"
    (root / "reports/claims.json").write_text(json.dumps(rows))
    proc = subprocess.run([sys.executable, "-m", "claimbench.cli", "diff", "--page"], cwd=root,
                          capture_output=True, text=True)          # the copy's own code (cwd first on the path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    key = f"{victim['study']}/{victim['id']}"
    browser.open(root / "reports/index.html")
    deadline = time.time() + 10
    while key not in browser.driver.find_element("id", "diff").text and time.time() < deadline:
        time.sleep(0.2)
    text = browser.driver.find_element("id", "diff").text
    assert key in text and "1 must claim(s) went from holds to fails" in text, text
    row = browser.driver.find_element("id", f"claim-{victim['study']}--{victim['id']}")
    assert "changed" in row.get_attribute("class").split()
    browser.screenshot("ledger_diff")
    assert browser.console_errors() == []
    assert browser.external_requests() == []
