"""Sites in a browser: a folder served over HTTP on 127.0.0.1, headless Debian Chromium, and what went wrong on a page."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves files without logging each request to stderr."""

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@contextmanager
def serving(folder: Path) -> Iterator[str]:
    """``folder`` over HTTP on 127.0.0.1, from a thread; yields the base URL and stops the server after."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def chromium():
    """Headless Debian Chromium through Playwright; skipped without it, except on CI."""
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing on CI (.ci/run installs Debian's chromium)")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def problems_on(page) -> list[str]:
    """A list that collects, from now on, each console error or warning, page error, failed request and HTTP error of ``page``."""
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    # A request the browser cancels because the page navigates away (a click while the favicon still loads) is
    # net::ERR_ABORTED: a race of the test's own clicks, not a failure of the site, and under load it happens.
    page.on("requestfailed", lambda r: None if r.failure == "net::ERR_ABORTED" else problems.append(f"failed: {r.url}"))
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    return problems
