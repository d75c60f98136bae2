"""What the browser tests share: Debian's Chromium (one browser per module), browser contexts with
the suite's viewport and timeout, a page on the session's platform, and the local fake provider
(``konnectz_devstack.fake_apps``) with a catalogue that holds its apps.

A test module may override ``page`` (the canvas tests use a larger viewport through ``new_context``).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect, sync_playwright

import konnectz_devstack.fake_apps
from konnectz_devstack import Platform
from konnectz_devstack.pytest_plugin import make_platform
from konnectz_devstack.testing import sign_in_through_form, sign_up, text_box, wait_until

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
        context.set_default_timeout(45_000)  # an action waits this long: 20 s ran out at load 10 on two cores
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
            Ui.open_run_details(page, items.first, expected)
            return
        raise AssertionError(f"no run of konnect {konnect_id} was listed")

    return open_


class Ui:
    """What several browser tests do the same way, one copy each: the ``ui`` fixture (the conftest is
    not importable under importlib mode). Every gesture takes the Playwright page it acts on."""

    @staticmethod
    def choose_tab(page: Page, name: str) -> None:
        """Click the tab ``name`` until it is selected: a click while its modal is still opening (its
        zoom animation, slow on a loaded machine) can land on the moving element and be lost."""
        tab = page.get_by_role("tab", name=name)
        for _ in range(20):
            tab.click()
            try:
                expect(tab).to_have_attribute("aria-selected", "true", timeout=1000)
                return
            except AssertionError:
                continue
        expect(tab).to_have_attribute("aria-selected", "true")

    @staticmethod
    def open_run_details(page: Page, item: Locator, expected: str) -> None:
        """Click a run of the task-log modal until its details show (a click during the modal's zoom
        animation can be lost); they must contain ``expected``."""
        details = page.get_by_test_id("tasklog-details")
        for _ in range(10):
            item.click()
            try:
                expect(details).to_be_visible(timeout=1000)
                break
            except AssertionError:
                continue
        expect(details).to_contain_text(expected)

    @staticmethod
    def mail_link(platform: Platform, email: str) -> str:
        """The verification link of the dev mailbox's mail to ``email`` (waited for up to 30 s)."""

        def link() -> str:
            for mail in httpx.get(f"{platform.api_url}/dev/mail.json").json():
                if mail["to"] == email:
                    return next(u for u in mail["links"] if "/verify-email/" in u)
            return ""

        return wait_until(link, timeout=30, what=f"the verification mail to {email}")

    @staticmethod
    def sign_up_through_form(
        page: Page,
        platform: Platform,
        email: str,
        password: str,
        name: tuple[str, str],
        before_submit: Callable[[], None] | None = None,
    ) -> None:
        """On the sign-up page (already open): the email, Continue, ``name`` (first, last) and the
        password twice; ``before_submit()``; submit; then the link of the verification mail, opened."""
        page.get_by_test_id("signup-email").fill(email)
        page.get_by_test_id("signup-continue").click()
        page.get_by_test_id("signup-first-name").fill(name[0])
        page.get_by_test_id("signup-last-name").fill(name[1])
        page.get_by_test_id("signup-password").fill(password)
        page.get_by_test_id("signup-password-confirmation").fill(password)
        if before_submit is not None:
            before_submit()
        page.get_by_test_id("signup-submit").click()
        expect(page.get_by_test_id("signup-done")).to_contain_text(email)
        page.goto(Ui.mail_link(platform, email))
        expect(page.get_by_test_id("verify-status")).to_contain_text("Verification Completed")

    @staticmethod
    def new_flow(page: Page, platform: Platform, prefix: str, password: str = "a-long-password") -> str:
        """A new user (``<prefix>-<ns>@example.com``, signed up through the api) signed in through the
        form, on an empty canvas of Create Flow; the email."""
        email = f"{prefix}-{time.time_ns()}@example.com"
        with httpx.Client(base_url=platform.api_url, timeout=30) as api:
            sign_up(api, email, password)
        sign_in_through_form(page, email, password)
        page.get_by_test_id("create-flow").click()
        page.wait_for_url("**/create")
        return email

    @staticmethod
    def signed_in_context(
        new_context: NewContext, platform: Platform, api: httpx.Client, email: str, password: str
    ) -> tuple[BrowserContext, dict[str, str]]:
        """A new user (Ada, signed up through ``api``) and a browser context holding their session
        cookie (the SPA's jwtToken record); the context and the user's Authorization header."""
        headers = sign_up(api, email, password, first_name="Ada")
        record = {"token": headers["Authorization"].removeprefix("Bearer "), "keepMeLoggedIn": True, "lang": "en"}
        cookie = base64.b64encode(json.dumps({**record, "appId": None}).encode()).decode()
        context = new_context(platform.api_url)
        context.add_cookies([{"name": "jwtToken", "value": cookie, "url": platform.api_url}])
        return context, headers

    @staticmethod
    def choose(page: Page, select_id: str, option_id: str) -> None:
        """Open the select ``select_id`` and pick its option ``option_id``."""
        page.get_by_test_id(select_id).click()
        option = page.locator(f".ant-select-dropdown:visible [data-testid='{option_id}']")
        expect(option).to_be_visible()
        # The card may still be settling after the canvas fitted it into view: click the option itself.
        option.dispatch_event("click")
        expect(option).to_have_count(0)

    @staticmethod
    def reference(page: Page, field_id: str, search: str, before: str = "") -> None:
        """Type ``before``, then '@' and part of a key, and pick the reference from the mention list."""
        box = text_box(page, field_id)
        box.click()
        box.press_sequentially(before + "@" + search, delay=30)
        option = page.locator(".ant-mentions-dropdown:visible .ant-mentions-dropdown-menu-item").first
        expect(option).to_be_visible()
        option.click()

    @staticmethod
    def add_step(page: Page, tool: str, provider: str, search: str) -> None:
        """A step of app ``provider`` from the toolbar's ``tool`` drawer, found by ``search``."""
        page.get_by_test_id(tool).click()
        page.get_by_test_id("action-drawer-search").fill(search)
        page.locator(f".ant-drawer:visible [data-testid='app-tile-{provider}']").first.click()
        page.wait_for_timeout(400)  # the canvas fits the new card into view

    @staticmethod
    def test_node(page: Page, node_id: str) -> None:
        """Test & Review of a step (Proceed when a trigger asks), until its status is Success."""
        status = page.get_by_test_id(f"status-{node_id}")
        button = page.get_by_test_id(f"node-test-{node_id}")
        expect(button).to_be_enabled()
        button.scroll_into_view_if_needed()
        # The card can still grow above the button (an auto-sizing field, the reference chips under it)
        # between Playwright's stability check and its mouse events, which then land beside the button
        # and start nothing (the journey's node-3 stayed Draft, no request reached the api): the click
        # is dispatched to the button itself, as the account option's is.
        button.dispatch_event("click")
        if page.get_by_test_id(f"trigger-test-proceed-{node_id}").count():
            page.get_by_test_id(f"trigger-test-proceed-{node_id}").click()
        try:
            # A test that starts shows Loading at once (before its request); an untested node that
            # stays Draft means the click started no test: say what the page said instead of waiting.
            expect(status).not_to_have_attribute("data-status", "Draft", timeout=5_000)
        except AssertionError as exc:
            shown = page.locator(".ant-message-notice").all_inner_texts()
            raise AssertionError(
                f"Test & Review of {node_id} did not start; the page showed {shown or 'no message'}"
            ) from exc
        expect(status).to_have_attribute("data-status", "Success", timeout=30_000)

    @staticmethod
    def publish_flow(page: Page, name: str) -> int:
        """On the editor: name the flow ``name`` and Publish; on the flow list, its row shows
        Published. The konnect's id."""
        page.get_by_test_id("flow-name").click()
        page.get_by_test_id("flow-name").fill(name)
        page.get_by_test_id("publish-flow").click()
        page.wait_for_url("**/flows/home")
        row = page.locator("[data-testid^='flow-row-']", has_text=name).first
        expect(row).to_be_visible()
        konnect_id = int((row.get_attribute("data-testid") or "").rsplit("-", 1)[1])
        expect(page.get_by_test_id(f"flow-status-{konnect_id}")).to_contain_text("Published", timeout=30_000)
        return konnect_id

    @staticmethod
    def post_published(url: str, payload: dict[str, Any]) -> None:
        """Post ``payload`` to the published flow's webhook ``url`` until it answers 200 (up to 30 s)."""
        wait_until(
            lambda: httpx.post(url, json=payload).status_code == 200,
            timeout=30,
            what="the published webhook",
        )

    @staticmethod
    def enter_oauth_app(
        page: Page, app: str, client_id: str, client_secret: str, before_save: Callable[[], None] | None = None
    ) -> None:
        """In the Manage Accounts drawer of OAuth app ``app`` (a name) not configured yet, opened by an
        administrator (named by the installer: KONNECTZ_ADMIN_EMAILS or the admin grant command): the
        notice, the redirect URL to register and a disabled New Account; the client id and secret
        entered, ``before_save()``, saved; the settings then name the client id."""
        expect(page.get_by_text("- Manage Accounts")).to_be_visible()
        expect(page.get_by_text(f"{app} is not configured for OAuth2 on this server yet.")).to_be_visible()
        expect(page.get_by_test_id("oauth-redirect-url")).to_contain_text("/oauth/response")
        expect(page.get_by_role("button", name="New Account")).to_be_disabled()
        form = page.get_by_test_id("oauth-client-form")
        form.get_by_label("Client ID").fill(client_id)
        form.get_by_label("Client Secret").fill(client_secret)
        if before_save is not None:
            before_save()
        form.get_by_role("button", name="Save OAuth app").click()
        expect(page.get_by_text(f"{app}'s OAuth app saved")).to_be_visible()
        expect(page.get_by_test_id("oauth-client-settings")).to_contain_text(client_id)

    @staticmethod
    def connect_through_popup(page: Page, provider_url: str, on_consent: Callable[[Page], None] | None = None) -> None:
        """New Account of the Manage Accounts drawer: the popup goes to the fake provider's consent page
        (at ``provider_url``), ``on_consent(popup)``, Allow; it comes back and closes, and the account
        (named by the provider "Ada at Fake") is listed."""
        with page.expect_popup() as opened:
            page.get_by_role("button", name="New Account").click()
        popup = opened.value
        popup.wait_for_url(f"{provider_url}/authorize?**")
        expect(popup.get_by_text("Konnectz wants to use your Fake account")).to_be_visible()
        if on_consent is not None:
            on_consent(popup)
        with popup.expect_event("close", timeout=30_000):
            popup.locator("#allow").click()
        expect(page.get_by_test_id("accounts-list")).to_contain_text("Ada at Fak...")


@pytest.fixture
def ui() -> type[Ui]:
    """:class:`Ui`: the gestures and sign-ups the browser tests share."""
    return Ui


@pytest.fixture
def select_tab() -> Callable[[Page, str], None]:
    """:meth:`Ui.choose_tab` (also ``ui.choose_tab``), for the tests that need only that."""
    return Ui.choose_tab


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


@pytest.fixture(scope="module")
def fake_install(fake_catalogue: Callable[[Path], Path]) -> Callable[..., AbstractContextManager[Platform]]:
    """``with fake_install(prefix, oauth_clients=None, admin_emails=()) as platform``: a fresh install of
    its own (no user yet; ``oauth_clients`` as the environment's OAuth clients, none by default;
    ``admin_emails`` the administrators the installer names, KONNECTZ_ADMIN_EMAILS, none by default; its
    state in a temporary folder named ``prefix…``) with the SPA and :func:`fake_catalogue`'s catalogue,
    started; stopped and removed after the block."""

    @contextlib.contextmanager
    def start(
        prefix: str, oauth_clients: dict[str, Any] | None = None, admin_emails: Sequence[str] = ()
    ) -> Iterator[Platform]:
        state = Path(tempfile.mkdtemp(prefix=prefix))
        catalogue = fake_catalogue(state)
        platform = make_platform(
            state / "platform",
            KONNECTZ_CATALOGUE_DIR=str(catalogue),
            KONNECTZ_OAUTH_CLIENTS=json.dumps(oauth_clients or {}),
            KONNECTZ_ADMIN_EMAILS=",".join(admin_emails),
        )
        platform.web_dist = REPO / "web" / "dist"
        platform.start()
        try:
            yield platform
        finally:
            platform.stop()
            shutil.rmtree(state, ignore_errors=True)

    return start
