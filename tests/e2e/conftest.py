"""What the browser tests share: Debian's Chromium (one browser per module), browser contexts with
the suite's viewport and timeout, a page on the session's platform, and the local fake provider
(``konnectz_devstack.fake_apps``) with a catalogue that holds its apps.

A test module may override ``page`` (the canvas tests use a larger viewport through ``new_context``).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

import konnectz_devstack.fake_apps
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

# Assertions wait up to 15 s (Playwright's default is 5 s): CI runs three browsers, their platforms
# and the other test workers on two cores, where a route change after Publish took over 5 s to
# render. Checks that must be quick pass their own, shorter timeout.
expect.set_options(timeout=15_000)


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


OpenTaskLog = Callable[[Page, int, str], None]


@pytest.fixture
def open_task_log() -> OpenTaskLog:
    """``open_task_log(page, konnect_id, expected)``: on the flow list, open the flow's task-log modal
    until a run is listed (runs are stored asynchronously), then the newest run's details, which
    must contain ``expected``. A modal opened while the previous one is still closing would close
    under the click, so each retry waits until the list is gone; a click on a run during the modal's
    zoom animation can be lost, so it is repeated until the details show."""

    def open_(page: Page, konnect_id: int, expected: str) -> None:
        items = page.locator("[data-testid^='tasklog-item-']")
        # A schedule's first fire may be up to its interval (5 minutes in the tests) after publishing.
        deadline = time.monotonic() + 420
        while time.monotonic() < deadline:
            page.get_by_test_id(f"flow-logs-{konnect_id}").click()
            try:
                expect(items.first).to_be_visible(timeout=1000)
            except AssertionError:
                # Its close button, not Esc: antd gives Esc to the tooltip of the button just clicked
                # when that tooltip opened after the modal, and the modal would stay open.
                page.locator(".ant-modal-wrap:visible .ant-modal-close").first.click()
                expect(page.locator(".ant-modal-wrap:visible")).to_have_count(0, timeout=5000)
                continue
            details = page.get_by_test_id("tasklog-details")
            for _ in range(10):
                items.first.click()
                try:
                    expect(details).to_be_visible(timeout=1000)
                    break
                except AssertionError:
                    continue
            expect(details).to_contain_text(expected)
            return
        raise AssertionError(f"no run of konnect {konnect_id} was listed")

    return open_


def choose_tab(page: Page, name: str) -> None:
    """Click the tab ``name`` until it is selected: a click while its modal is still opening (its zoom
    animation, slow on a loaded machine) can land on the moving element and be lost."""
    tab = page.get_by_role("tab", name=name)
    for _ in range(20):
        tab.click()
        try:
            expect(tab).to_have_attribute("aria-selected", "true", timeout=1000)
            return
        except AssertionError:
            continue
    expect(tab).to_have_attribute("aria-selected", "true")


@pytest.fixture
def select_tab() -> Callable[[Page, str], None]:
    """:func:`choose_tab` for the tests (the conftest is not importable under importlib mode)."""
    return choose_tab


REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fake_apps() -> Any:
    """The fake provider's module (``konnectz_devstack.fake_apps``, which the api tests use too):
    ``FakeApp``, ``CLIENT_ID``, ``CLIENT_SECRET``, ``API_KEY``…"""
    return konnectz_devstack.fake_apps


@pytest.fixture(scope="module")
def fake(fake_apps: Any) -> Iterator[Any]:
    """The fake provider: consent page, token endpoint (PKCE), and the app's API (/me, /projects, /tasks)."""
    server = fake_apps.FakeApp().start()
    server.consent = True
    yield server
    server.stop()


@pytest.fixture(scope="module")
def fake_catalogue(fake: Any, fake_apps: Any) -> Callable[[Path], Path]:
    """``fake_catalogue(state)``: a catalogue under ``state`` with the real manifests, the long tail
    when built (``make catalogue``: the applications page then shows the 1,000+ apps a real install
    has), the bundled icons and the fake provider's apps. Fails when the SPA is not built."""

    def make(state: Path) -> Path:
        if not (REPO / "web" / "dist" / "index.html").exists():
            pytest.fail("web/dist is missing: run `make web-build` first")
        catalogue = state / "catalogue"
        (catalogue / "apps").mkdir(parents=True)
        for manifest in (REPO / "catalogue" / "apps").iterdir():
            (catalogue / "apps" / manifest.name).symlink_to(manifest)
        fake_apps.write_manifests(catalogue / "apps", fake.url)
        (catalogue / "icons").symlink_to(REPO / "catalogue" / "icons")
        bundle = REPO / "catalogue" / "build" / "generated.json"
        if bundle.exists():
            (catalogue / "build").mkdir()
            (catalogue / "build" / "generated.json").symlink_to(bundle)
        return catalogue

    return make
