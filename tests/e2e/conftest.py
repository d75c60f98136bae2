"""What the browser tests share: Debian's Chromium (one browser per module), browser contexts with
the suite's viewport and timeout, and a page on the session's platform.

A test module may override ``page`` (the canvas tests use a larger viewport through ``new_context``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from konnectz_devstack import Platform

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-results"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

NewContext = Callable[..., BrowserContext]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not os.path.exists(CHROMIUM):
        pytest.fail("Chromium is missing: `make test` installs it from Debian's packages (apt-get install chromium)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def new_context(browser: Browser) -> Iterator[NewContext]:
    """``new_context(base_url, width=1440, height=900, **options)``: a fresh context (own cookies and
    storage; ``options`` as Playwright's), 20 s default timeout; every context still open when the
    test ends is closed."""
    made: list[BrowserContext] = []

    def make(base_url: str, *, width: int = 1440, height: int = 900, **options: Any) -> BrowserContext:
        context = browser.new_context(base_url=base_url, viewport={"width": width, "height": height}, **options)
        context.set_default_timeout(20_000)
        made.append(context)
        return context

    yield make
    for context in made:
        context.close()


@pytest.fixture
def page(new_context: NewContext, platform: Platform, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A page on the session's platform; its last state is saved as test-results/<module>-last-page.png."""
    if platform.web_dist is None:
        pytest.fail("web/dist is missing: run `make web-build` first (make test does)")
    pg = new_context(platform.api_url).new_page()
    yield pg
    ARTIFACTS.mkdir(exist_ok=True)
    module = request.module.__name__.rsplit(".", 1)[-1]
    pg.screenshot(path=str(ARTIFACTS / f"{module}-last-page.png"))
