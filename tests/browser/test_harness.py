"""The harness checks itself: a clean local page passes, and a page that reaches off the machine
or logs an error is caught (so a ledger test that finds nothing has looked)."""
from __future__ import annotations

import json

from tests.browser.conftest import is_external, page_requests

CLEAN = """<!doctype html><html><head><meta charset="utf-8"><title>clean</title></head>
<body><p id="ok">local only</p>
<img id="dot" alt="dot" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==">
</body></html>"""

LEAKY = """<!doctype html><html><head><meta charset="utf-8"><title>leaky</title></head>
<body><img id="far" alt="far" src="http://example.invalid/x.png">
<script>console.error("boom from the page");</script></body></html>"""


def test_is_external():
    assert not is_external("file:///tmp/a.html")
    assert not is_external("data:image/png;base64,AAAA")
    assert not is_external("http://127.0.0.1:5000/x")
    assert not is_external("http://localhost:8080/")
    assert is_external("http://example.invalid/x.png")
    assert is_external("https://cdn.jsdelivr.net/npm/vega@5")
    # the browser's own pages are not the page's requests (chromium 150 loads this one)
    assert not is_external("chrome-untrusted://new-tab-page/one-google-bar?paramsencoded=")
    assert not is_external("chrome://new-tab-page/")
    assert not is_external("devtools://devtools/bundled/inspector.html")


def _sent(url: str, document: str) -> dict:
    return {"message": json.dumps({"message": {"method": "Network.requestWillBeSent", "params": {
        "request": {"url": url}, "documentURL": document}}})}


def test_planted_browser_internal_requests_are_not_the_pages():
    """A performance log as chromium 150 writes it while a test runs: its new-tab page and that
    page's own fetch (an https URL whose document is chrome://new-tab-page/) are dropped; the
    page under test's requests, local or not, are kept."""
    log = [_sent("chrome-untrusted://new-tab-page/one-google-bar?paramsencoded=",
                 "chrome-untrusted://new-tab-page/one-google-bar?paramsencoded="),
           _sent("https://www.google.com/async/newtab_ogb", "chrome://new-tab-page/"),
           _sent("file:///tmp/page.html", "file:///tmp/page.html"),
           _sent("http://example.invalid/x.png", "file:///tmp/page.html"),
           {"message": json.dumps({"message": {"method": "Network.responseReceived", "params": {}}})}]
    assert page_requests(log) == ["file:///tmp/page.html", "http://example.invalid/x.png"]


def test_clean_local_page(browser, tmp_path):
    page = tmp_path / "clean.html"
    page.write_text(CLEAN)
    browser.open(page)
    assert browser.wait_for("#ok").text == "local only"
    assert browser.driver.execute_script("return document.getElementById('dot').naturalWidth") == 1
    assert browser.console_errors() == []
    assert browser.external_requests() == []
    assert any(u.startswith("file://") for u in browser.requests()), "the performance log saw no request at all"
    shot = browser.screenshot("clean")
    assert shot.stat().st_size > 0


def test_browser_pages_opened_before_the_test_page_are_not_counted(browser, tmp_path):
    """A real browser-internal page (chromium's version page, then its new-tab page where the
    build has one) loads first; the clean page after it still has no external request."""
    browser.driver.get("chrome://version")
    browser.driver.get("chrome://new-tab-page")
    page = tmp_path / "clean.html"
    page.write_text(CLEAN)
    browser.open(page)
    assert browser.external_requests() == []
    assert any(u.startswith("file://") for u in browser.requests())


def test_starts_on_about_blank(browser):
    assert browser.driver.current_url == "about:blank"
    assert browser.requests() == []


def test_catches_external_request_and_console_error(browser, tmp_path):
    page = tmp_path / "leaky.html"
    page.write_text(LEAKY)
    browser.open(page)
    browser.wait_for("#far")
    assert "http://example.invalid/x.png" in browser.external_requests()
    errors = browser.console_errors()
    assert any("boom from the page" in e for e in errors), errors
