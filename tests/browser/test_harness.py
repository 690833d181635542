"""The harness checks itself: a clean local page passes, and a page that reaches off the machine
or logs an error is caught (so a ledger test that finds nothing has looked)."""
from __future__ import annotations

from tests.browser.conftest import is_external

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


def test_catches_external_request_and_console_error(browser, tmp_path):
    page = tmp_path / "leaky.html"
    page.write_text(LEAKY)
    browser.open(page)
    browser.wait_for("#far")
    assert "http://example.invalid/x.png" in browser.external_requests()
    errors = browser.console_errors()
    assert any("boom from the page" in e for e in errors), errors
