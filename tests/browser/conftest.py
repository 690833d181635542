"""The browser-test harness: a real headless Chromium (Debian's ``/usr/bin/chromium`` and
``/usr/bin/chromedriver``) driven through selenium 4. Nothing here downloads a browser or a
driver: the driver's path is given to selenium, so its Selenium Manager never runs.

The ``browser`` fixture (one browser per test) gives an object with:

``open(url)``            load a URL (a ``Path`` is turned into a file:// URL) and wait for the
                         document to be complete;
``driver``               the selenium WebDriver;
``console_errors()``     the SEVERE console entries since the last call (a failed image or
                         script load is one of them);
``external_requests()``  every URL the page under test requested that is not file://, data:,
                         blob:, about: or on 127.0.0.1 / localhost (from Chrome's performance
                         log: ``Network.requestWillBeSent``), since the test began. What the
                         browser loads for itself is not the page's: its own schemes
                         (``chrome://``, ``chrome-untrusted://``, ``devtools://``, ...) and
                         requests whose document is one of them (a new-tab page). The browser
                         starts on ``about:blank`` and what it did while starting is dropped;
``screenshot(name)``     a PNG of the viewport saved as ``<tmp_path>/<name>.png``; its path;
``wait_for(css, timeout=10)``  the first element matching ``css`` once it is present.

Tests in ``tests/browser/`` carry the ``browser`` marker (the fifth tier, run last; the root
conftest adds it to every test in this folder). Without
``/usr/bin/chromium`` they skip, saying so, except under ``CI=true``, where they fail
(``.ci/run`` installs chromium and chromium-driver with apt-get).
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
LOCAL_SCHEMES = {"file", "data", "blob", "about"}
# Chromium's own pages and their helpers: chromium 150 (Debian 12 main) loads its new-tab page's
# chrome-untrusted://new-tab-page/one-google-bar while a test runs; 156 does not
BROWSER_SCHEMES = {"chrome", "chrome-untrusted", "chrome-extension", "chrome-search", "devtools"}
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
# Without the background-networking switches Chromium reaches Google at start.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1400,1000")


def is_browser_internal(url: str) -> bool:
    """True for the browser's own pages (chrome://, chrome-untrusted://, devtools://, ...)."""
    return urlparse(url).scheme in BROWSER_SCHEMES


def is_external(url: str) -> bool:
    """True for a URL that would leave the machine."""
    u = urlparse(url)
    if u.scheme in LOCAL_SCHEMES or not u.scheme or is_browser_internal(url):
        return False
    return (u.hostname or "") not in LOCAL_HOSTS


def page_requests(log: list[dict]) -> list[str]:
    """The URLs of the ``Network.requestWillBeSent`` events in a performance log that the page
    under test made: not the browser's own (its schemes, or a document of its own, such as a
    new-tab page fetching its widgets)."""
    urls = []
    for entry in log:
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") != "Network.requestWillBeSent":
            continue
        url, document = msg["params"]["request"]["url"], msg["params"].get("documentURL", "")
        if not (is_browser_internal(url) or is_browser_internal(document)):
            urls.append(url)
    return urls


class Browser:
    def __init__(self, driver, tmp_path: Path):
        self.driver = driver
        self.tmp_path = tmp_path
        self._requests: list[str] = []

    def open(self, url) -> None:
        if isinstance(url, Path):
            url = url.resolve().as_uri()
        self.driver.get(url)
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(self.driver, 30).until(
            lambda d: d.execute_script("return document.readyState") == "complete")

    def start_blank(self) -> None:
        """Open ``about:blank`` and forget what the browser requested while it started."""
        self.driver.get("about:blank")
        self.driver.get_log("performance")
        self._requests.clear()

    def _drain_performance(self) -> None:
        self._requests.extend(page_requests(self.driver.get_log("performance")))

    def requests(self) -> list[str]:
        """Every URL the page under test requested since the test began (local ones included)."""
        self._drain_performance()
        return list(self._requests)

    def external_requests(self) -> list[str]:
        return [u for u in self.requests() if is_external(u)]

    def console_errors(self) -> list[str]:
        return [e["message"] for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]

    def screenshot(self, name: str) -> Path:
        path = self.tmp_path / f"{name}.png"
        if not self.driver.save_screenshot(str(path)):
            raise RuntimeError(f"screenshot {path} was not written")
        return path

    def wait_for(self, css: str, timeout: float = 10):
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as EC
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, timeout).until(
            EC.presence_of_element_located((By.CSS_SELECTOR, css)),
            message=f"no element matches {css!r} after {timeout} s")


def _require_chromium() -> None:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if not missing:
        return
    why = (f"{' and '.join(missing)} missing: the browser tests need Debian's chromium and "
           f"chromium-driver (apt-get install chromium chromium-driver; .ci/run does it)")
    if os.environ.get("CI") == "true":
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture
def browser(tmp_path):
    """A headless Chromium for one test (see the module docstring)."""
    _require_chromium()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:  # the dev extra pins selenium
        pytest.fail(f"selenium is not installed ({exc}): pip install -e '.[dev]'")
    profile = tmp_path / "chromium-profile"
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={profile}")
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    service = Service(executable_path=str(CHROMEDRIVER), log_output=str(tmp_path / "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=opts)
    try:
        b = Browser(driver, tmp_path)
        b.start_blank()
        yield b
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
