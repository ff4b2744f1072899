"""Fixtures for the real-browser test of the built book (``make browser-test``).

The built HTML (``$HCA_BOOK_HTML``, default ``_build/html``) is served by a
background ``http.server`` thread on 127.0.0.1 only, and driven with Debian's
headless Chromium (``$HCA_CHROMIUM``, default ``/usr/bin/chromium``) through
Playwright's Python package. Playwright's own browser download is never used.
Every request to another host is aborted (and reported by the console check), so
the test never touches the network and sees what a reader without network sees.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCREENSHOTS = REPO / "_build" / "screenshots"
# The reader's window: figure text and column widths are checked at this width.
VIEWPORT = {"width": 1400, "height": 900}
# A phone (an iPhone 12-15 in portrait): figure text and page width are checked at this width too.
PHONE_VIEWPORT = {"width": 390, "height": 844}
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--no-proxy-server",
    # Belt and braces next to the request routing below: no DNS for any other host.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


def book_html_dir() -> Path:
    """The built book: ``$HCA_BOOK_HTML`` or ``<repo>/_build/html``."""
    return Path(os.environ.get("HCA_BOOK_HTML") or REPO / "_build" / "html").resolve()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        pass


@pytest.fixture(scope="session")
def html_dir() -> Path:
    root = book_html_dir()
    if not (root / "index.html").is_file():
        pytest.fail(
            f"no built book at {root} (index.html missing): run `make book` first "
            "(or point HCA_BOOK_HTML at a built _build/html)",
            pytrace=False,
        )
    return root


@pytest.fixture(scope="session")
def base_url(html_dir: Path):
    """Serve the built book on 127.0.0.1 on a free port; yield its root URL."""
    handler = functools.partial(_QuietHandler, directory=str(html_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="book-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium driven by Playwright."""
    executable = os.environ.get("HCA_CHROMIUM", "/usr/bin/chromium")
    if not (shutil.which(executable) or Path(executable).is_file()):
        pytest.fail(
            f"no Chromium at {executable}: run `bash scripts/install_browser.sh` "
            "(or set HCA_CHROMIUM)",
            pytrace=False,
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(
            "the Python package `playwright` is missing: pip install -e '.[test]'",
            pytrace=False,
        )
    with sync_playwright() as pw:
        # Playwright gives every launch a fresh temporary --user-data-dir.
        browser = pw.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def offline_context(browser, base_url: str, viewport: dict, init_script: str | None = None):
    """A browser context at ``viewport`` in which every request off the local server is
    aborted (``init_script`` runs before each page's own scripts)."""
    context = browser.new_context(viewport=viewport)
    if init_script:
        context.add_init_script(init_script)
    context.route(lambda url: not url.startswith(base_url), lambda route: route.abort())
    context.set_default_timeout(30_000)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture(scope="session")
def browser_context(browser, base_url: str):
    """One context for all pages; every request off the local server is aborted."""
    with offline_context(browser, base_url, VIEWPORT) as context:
        yield context


@pytest.fixture(scope="session")
def phone_context(browser, base_url: str):
    """A second context at a phone's width (390 CSS px), offline as well. A plain narrow window,
    not mobile emulation: a mobile browser may zoom out a page wider than the screen, which
    would hide the very overflow the phone tests look for."""
    with offline_context(browser, base_url, PHONE_VIEWPORT) as context:
        yield context


#: What the theme reads on load to pick its colour mode (pydata-sphinx-theme: ``localStorage``
#: "mode" and "theme"; the book's default is light).
DARK_MODE_SCRIPT = "localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');"


@pytest.fixture(scope="session")
def dark_context(browser, base_url: str):
    """A third context at 1400 px with the theme in dark mode (as a reader who chose it with the
    theme's button), offline as well."""
    with offline_context(browser, base_url, VIEWPORT, DARK_MODE_SCRIPT) as context:
        yield context


@pytest.fixture(scope="session")
def screenshot_dir() -> Path | None:
    """Where the full-page screenshots go; None when ``HCA_SCREENSHOTS=0`` (``.ci/run``: a CI
    clone is thrown away, and the screenshots take about half of the pages' time)."""
    if os.environ.get("HCA_SCREENSHOTS", "1") == "0":
        return None
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
