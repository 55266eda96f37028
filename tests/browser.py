"""Headless Chromium for the report tests: Debian's system browser driven by Playwright
(a browser download fails on these machines, so Playwright is pointed at /usr/bin/chromium).
Outside CI a missing browser skips the test; in CI (CI=true) it fails it, since setup.sh
installs the browser there."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

# As this workplace's machines need: no network chatter, a fresh profile.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def need_browser() -> str:
    """The browser's path, or skip (fail in CI)."""
    path = chromium_path()
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        path = None
    if path is None:
        message = "no Chromium or no Playwright (setup.sh installs both)"
        if os.environ.get("CI"):
            pytest.fail(message + ": CI must run the browser tests")
        pytest.skip(message)
    return path


def screenshot_dir() -> Path:
    """Where screenshots go (HLOSCOPE_SCREENSHOTS, else a folder under the temp dir); the
    tests print each path so a person can look."""
    d = Path(os.environ.get("HLOSCOPE_SCREENSHOTS") or Path(tempfile.gettempdir()) / "hloscope-screenshots")
    d.mkdir(parents=True, exist_ok=True)
    return d


@contextmanager
def page_of(html: Path, width: int = 1280, height: int = 900):
    """(page, problems): the report opened from disk; `problems` collects console errors,
    page errors, dialogs and any request that leaves the file (the page must fetch nothing)."""
    from playwright.sync_api import sync_playwright

    executable = need_browser()
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
                    if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
            page.on("request", lambda r: problems.append(f"request: {r.url}")
                    if not r.url.startswith(("file:", "data:", "about:")) else None)
            page.goto(html.resolve().as_uri())
            page.wait_for_load_state("load")
            yield page, problems
        finally:
            browser.close()
