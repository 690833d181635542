"""The ledger page built from synthetic rows (no smoke build) with markup planted in its fields,
opened in a real headless Chromium: nothing planted runs, a message from anywhere but the page's
own hidden iframe is ignored, and the iframe's comparison is still shown, as text."""
from __future__ import annotations

import time
from pathlib import Path

from stages.ledger.page import DIFF_PAGE, diff_page, to_html
from tests.ledger.test_page import PAPERS, RUNS, V2_ROWS, v2_row

PWN = "<img src=x onerror=\"document.title='pwned'; window.__pwned=1\">"
TITLE = "Claims ledger (synthetic)"
FORGED = {"kind": "claimbench-diff", "rev": "x", "must_broke": "<img src=x onerror=window.__pwned=1>",
          "changes": [{"key": "<img src=x onerror=window.__pwned=1>", "change": "c", "old_verdict": "a",
                       "new_verdict": "b", "old_measured": "1", "new_measured": "2"}]}
NO_COMPARISON = "No comparison loaded"


def _page(tmp_path: Path) -> Path:
    rows = [*V2_ROWS, v2_row("gamma", "planted", "holds", statement=f"a statement {PWN}", note=f"a note {PWN}",
                             revisions=[{"date": "2026-02-01", "change": "threshold", "why": f"why {PWN}"}])]
    page = tmp_path / "reports/index.html"
    page.parent.mkdir(parents=True)
    page.write_text(to_html(rows, "default", TITLE, PAPERS, RUNS, {}))
    return page


def _state(driver) -> dict:
    return driver.execute_script(
        "return {pwned: typeof window.__pwned, title: document.title, diff: document.getElementById('diff').textContent,"
        " imgs: document.querySelectorAll('img').length, scripts: document.querySelectorAll('script').length};")


def test_planted_markup_and_a_forged_message_do_nothing(browser, tmp_path):
    page = _page(tmp_path)
    browser.open(page)
    browser.driver.execute_script(
        "document.querySelectorAll('details').forEach(function(d){d.open=true;});"
        "window.postMessage(arguments[0], '*');", FORGED)
    time.sleep(1.0)                                   # a message is delivered asynchronously
    state = _state(browser.driver)
    assert state == {"pwned": "undefined", "title": TITLE, "diff": state["diff"], "imgs": 0, "scripts": 1}, state
    assert NO_COMPARISON in state["diff"], state["diff"]            # the forged message was ignored
    planted = browser.driver.find_element("id", "claim-gamma--planted")
    assert f"a statement {PWN}" in planted.text and f"why {PWN}" in planted.text   # shown as text
    assert browser.console_errors() == []
    assert browser.external_requests() == []


def test_the_iframes_comparison_is_shown_as_text(browser, tmp_path):
    page = _page(tmp_path)
    changes = [{"key": "gamma/g2", "change": "verdict", "old_verdict": "holds", "new_verdict": "fails",
                "old_measured": "0.5", "new_measured": "0.3"},
               {"key": "gamma/<b>bold</b>", "change": "added", "old_verdict": "—", "new_verdict": "holds",
                "old_measured": "—", "new_measured": "<i>1</i>"}]
    (page.parent / DIFF_PAGE).write_text(diff_page({"rev": "HEAD", "changes": changes, "must_broke": 1}))
    browser.open(page)
    deadline = time.time() + 10
    while "gamma/g2" not in browser.driver.find_element("id", "diff").text and time.time() < deadline:
        time.sleep(0.2)
    text = browser.driver.find_element("id", "diff").text
    assert "Against the ledger of HEAD: 2 claim(s) changed, 1 must claim(s) went from holds to fails." in text, text
    cells = [td.text for td in browser.driver.find_elements("css selector", "#diff td")]
    assert cells[:4] == ["gamma/g2", "verdict", "holds → fails", "0.5 → 0.3"]
    assert cells[4] == "gamma/<b>bold</b>" and cells[7] == "— → <i>1</i>", cells
    assert browser.driver.find_elements("css selector", "#diff td b, #diff td i") == []
    row = browser.driver.find_element("id", "claim-gamma--g2")
    assert "changed" in row.get_attribute("class").split()
    assert _state(browser.driver)["pwned"] == "undefined"
    browser.driver.execute_script("document.getElementById('diff').scrollIntoView();")
    browser.screenshot("page_diff_from_iframe")
    assert browser.console_errors() == []
    assert browser.external_requests() == []


def test_synthetic_v2_page_filters_and_strips(browser, tmp_path):
    """The contract v2 display in the browser: a strip per seeded claim, "1 seed" for the v1 row,
    and "only failing claims" shows every verdict but holds and retired."""
    page = _page(tmp_path)
    browser.open(page)
    d = browser.driver
    assert len(d.find_elements("css selector", "tr.claim svg.strip")) == sum(
        1 for r in V2_ROWS if r.get("per_seed")) + 1
    assert d.find_element("id", "claim-zeta--old").find_element("css selector", "td.seeds").text == "1 seed"
    browser.screenshot("page_v2_top")
    browser.wait_for("#only-fails").click()
    shown = d.execute_script(
        "return [].slice.call(document.querySelectorAll('tr.claim')).filter(function(r){"
        "return r.offsetParent !== null;}).map(function(r){return r.dataset.verdict;});")
    assert sorted(shown) == ["fails", "inconclusive", "notrun", "notspecific"]
    d.find_element("id", "show-all").click()
    d.execute_script("document.getElementById('study-gamma').scrollIntoView();")
    browser.screenshot("page_v2_study")
    assert browser.console_errors() == []
    assert browser.external_requests() == []
